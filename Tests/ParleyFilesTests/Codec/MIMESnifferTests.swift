import ParleyFiles
import Testing

private let docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
private let xlsx = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
private let pptx = "application/vnd.openxmlformats-officedocument.presentationml.presentation"

/// A file's bytes and what it must be detected as, whatever the client claims.
struct SniffCase: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var mimeType: String
    var ext: String

    init(_ name: String, _ bytes: [UInt8], _ mimeType: String, _ ext: String) {
        (self.name, self.bytes, self.mimeType, self.ext) = (name, bytes, mimeType, ext)
    }

    var testDescription: String { "\(name) -> \(mimeType)" }
}

let sniffCorpus: [SniffCase] = [
    .init("JPEG (JFIF)", Fixture.jpeg, "image/jpeg", "jpg"),
    .init("JPEG (EXIF)", Fixture.jpegExif, "image/jpeg", "jpg"),
    .init("PNG", Fixture.png, "image/png", "png"),
    .init("GIF89a", Fixture.gif, "image/gif", "gif"),
    .init("GIF87a", Array("GIF87a".utf8) + Fixture.gif.dropFirst(6), "image/gif", "gif"),
    .init("WebP", Fixture.webp, "image/webp", "webp"),
    .init("WAV", Fixture.wav, "audio/wav", "wav"),
    .init("HEIC (major heic)", Fixture.ftyp("heic", ["mif1", "heic"]), "image/heic", "heic"),
    .init(
        "HEIC (major mif1, compatible heic)", Fixture.ftyp("mif1", ["mif1", "miaf", "MiHB", "heic"]), "image/heic",
        "heic"),
    .init("HEIC (heix)", Fixture.ftyp("heix", ["mif1", "heix"]), "image/heic", "heic"),
    .init("HEIF (mif1 only)", Fixture.ftyp("mif1", ["mif1", "miaf"]), "image/heif", "heif"),
    .init("HEIF sequence (msf1)", Fixture.ftyp("msf1", ["msf1", "iso8"]), "image/heif", "heif"),
    .init("HEIF (heif brand)", Fixture.ftyp("heif"), "image/heif", "heif"),
    .init("AVIF", Fixture.ftyp("avif", ["avif", "mif1", "miaf"]), "image/avif", "avif"),
    .init("AVIF (major mif1)", Fixture.ftyp("mif1", ["avif", "mif1"]), "image/avif", "avif"),
    .init("MP4 isom", Fixture.ftyp("isom", ["isom", "iso2", "avc1", "mp41"]), "video/mp4", "mp4"),
    .init("MP4 iso2", Fixture.ftyp("iso2"), "video/mp4", "mp4"),
    .init("MP4 mp41", Fixture.ftyp("mp41"), "video/mp4", "mp4"),
    .init("MP4 mp42", Fixture.ftyp("mp42", ["mp42", "mp41", "isom"]), "video/mp4", "mp4"),
    .init("MP4 avc1", Fixture.ftyp("avc1"), "video/mp4", "mp4"),
    .init("MP4 dash", Fixture.ftyp("dash", ["iso6", "mp41"]), "video/mp4", "mp4"),
    .init("MP4 unknown major, mp42 compatible", Fixture.ftyp("XAVC", ["XAVC", "mp42", "iso2"]), "video/mp4", "mp4"),
    .init("MOV", Fixture.ftyp("qt  ", ["qt  "]), "video/quicktime", "mov"),
    .init("M4A", Fixture.ftyp("M4A ", ["M4A ", "mp42", "isom"]), "audio/mp4", "m4a"),
    .init("3GP", Fixture.ftyp("3gp4", ["isom", "3gp4"]), "video/3gpp", "3gp"),
    .init("AAC ADTS MPEG-4", Fixture.adts, "audio/aac", "aac"),
    .init("AAC ADTS MPEG-2", Fixture.adtsMPEG2, "audio/aac", "aac"),
    .init(
        "AAC behind an ID3 tag", Fixture.id3(Array("TXXX".utf8) + [0, 0, 0, 2, 0, 0, 3, 0]) + Fixture.adts, "audio/aac",
        "aac"),
    .init("MP3 with ID3v2", Fixture.mp3ID3, "audio/mpeg", "mp3"),
    .init("MP3 frame sync (MPEG-1 layer III)", Fixture.mp3Frame, "audio/mpeg", "mp3"),
    .init("MP3 frame sync (MPEG-2 layer III)", Fixture.mp3FrameMPEG2, "audio/mpeg", "mp3"),
    .init("Ogg Opus", Fixture.oggPage(Fixture.opusHead), "audio/ogg", "opus"),
    .init("Ogg Vorbis", Fixture.oggPage(Fixture.vorbisHead), "audio/ogg", "ogg"),
    .init("AMR", Fixture.amr, "audio/amr", "amr"),
    .init("PDF", Fixture.pdf, "application/pdf", "pdf"),
    .init("DOCX", Fixture.office("word/document.xml"), docx, "docx"),
    .init("XLSX", Fixture.office("xl/workbook.xml"), xlsx, "xlsx"),
    .init("PPTX", Fixture.office("ppt/presentation.xml"), pptx, "pptx"),
    .init("plain zip", Fixture.zipEntry("notes/a.txt") + Fixture.zipEntry("b.bin"), "application/zip", "zip"),
    .init("empty zip", [0x50, 0x4B, 0x05, 0x06] + Array(repeating: 0, count: 18), "application/zip", "zip"),
    .init("gzip", [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03], "application/gzip", "gz"),
    .init("7z", [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C, 0x00, 0x04], "application/x-7z-compressed", "7z"),
    .init("RAR 5", Array("Rar!".utf8) + [0x1A, 0x07, 0x01, 0x00], "application/vnd.rar", "rar"),
    .init(
        "compound file (Office 97-2003)", [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0, 0],
        "application/x-ole-storage", "bin"),
    .init(
        "ustar", Array("notes.txt".utf8) + Array(repeating: 0, count: 248) + Array("ustar\u{0}00".utf8),
        "application/x-tar", "tar"),
    .init("ASCII text", Array("hello, world\n".utf8), "text/plain", "txt"),
    .init("UTF-8 text", Array("你好，世界 — ünïcödé 😀\r\n\tTabbed\u{0C}".utf8), "text/plain", "txt"),
    .init("UTF-8 text with BOM", [0xEF, 0xBB, 0xBF] + Array("bom".utf8), "text/plain", "txt"),
    .init("text with ESC (ANSI colours)", Array("\u{1B}[31mred\u{1B}[0m".utf8), "text/plain", "txt"),
]

@Suite("MIMESniffer")
struct MIMESnifferTests {
    @Test(arguments: sniffCorpus)
    func detectsByContent(_ testCase: SniffCase) {
        let expected = DetectedType(mimeType: testCase.mimeType, ext: testCase.ext)
        #expect(MIMESniffer.detect(prefix: testCase.bytes, declaredType: nil, filename: nil) == expected)
        // The content wins over a contradicting claim...
        #expect(
            MIMESniffer.detect(prefix: testCase.bytes, declaredType: "application/x-msdownload", filename: "x.exe")
                == expected)
        #expect(
            MIMESniffer.detect(prefix: testCase.bytes, declaredType: "image/gif", filename: "x.gif") == expected
                || testCase.mimeType == "image/gif")
        // ...and does not depend on what follows the prefix.
        let long = testCase.bytes + Array(repeating: 0x20, count: MIMESniffer.prefixLength)
        #expect(MIMESniffer.detect(prefix: long, declaredType: nil, filename: nil) == expected)
    }

    @Test func aJPGThatIsReallyAPNGIsAPNG() {
        let detected = MIMESniffer.detect(prefix: Fixture.png, declaredType: "image/jpeg", filename: "photo.jpg")
        #expect(detected == DetectedType(mimeType: "image/png", ext: "png"))
    }

    static let nearMisses: [(String, [UInt8], String?, String?, DetectedType)] = [
        (
            "RIFF that is neither WebP nor WAV",
            Array("RIFF".utf8) + Fixture.le32(4) + Array("CDXA".utf8) + [0, 0, 0xFF],
            nil, nil, .octetStream
        ),
        (
            "RIFF AVI", Array("RIFF".utf8) + Fixture.le32(4) + Array("AVI LIST".utf8), nil, nil,
            DetectedType(mimeType: "video/x-msvideo", ext: "avi")
        ),
        ("GIF88a is text", Array("GIF88a".utf8), nil, nil, .plainText),
        ("%PDF without the dash is text", Array("%PDF1.4".utf8), nil, nil, .plainText),
        (
            "ftyp with an unknown brand, declared MP4", Fixture.ftyp("abcd", ["efgh"]) + [0xFF], "video/mp4", nil,
            .octetStream
        ),
        ("ftyp with an unknown brand and no claim", Fixture.ftyp("abcd") + [0x00], nil, nil, .octetStream),
        ("truncated ftyp", Array(Fixture.ftyp("heic").prefix(10)), nil, nil, .octetStream),
        (
            "ftyp whose box size hides later brands",
            Array(Fixture.be32(16)) + Array("ftypmif1".utf8) + Fixture.be32(0)
                + Array("heic".utf8), nil, nil, DetectedType(mimeType: "image/heif", ext: "heif")
        ),
        (
            "Ogg page too short for a codec header", Array("OggS\0\u{2}".utf8), nil, nil,
            DetectedType(mimeType: "audio/ogg", ext: "ogg")
        ),
        ("OggS without version byte 0 is text", Array("OggSomething".utf8), nil, nil, .plainText),
        ("AMR without the newline is text", Array("#!AMR".utf8), nil, nil, .plainText),
        ("AMR-WB", Array("#!AMR-WB\n".utf8) + [0x04], nil, nil, DetectedType(mimeType: "audio/amr-wb", ext: "awb")),
        ("BM that is text", Array("BMW service report".utf8), nil, nil, .plainText),
        (
            "BM with a DIB header is a BMP", Array("BM".utf8) + Array(repeating: 0, count: 12) + Fixture.le32(40), nil,
            nil,
            DetectedType(mimeType: "image/bmp", ext: "bmp")
        ),
        ("ID3 that is text", Array("ID3 tags explained".utf8), nil, nil, .plainText),
        ("MPEG layer I frame is not MP3", [0xFF, 0xFF, 0x90, 0x00, 0x00], nil, nil, .octetStream),
        ("MPEG reserved version", [0xFF, 0xEB, 0x90, 0x00, 0x00], nil, nil, .octetStream),
        ("MPEG bad bitrate index", [0xFF, 0xFB, 0xF0, 0x00, 0x00], nil, nil, .octetStream),
        ("MPEG bad sample rate", [0xFF, 0xFB, 0x9C, 0x00, 0x00], nil, nil, .octetStream),
        ("ADTS needs two bytes", [0xFF], nil, nil, .octetStream),
        (
            "zip local header cut off", [0x50, 0x4B, 0x03, 0x04, 0x14], nil, nil,
            DetectedType(mimeType: "application/zip", ext: "zip")
        ),
        (
            "zip whose word/ entry is past the prefix",
            Fixture.zipEntry(
                "[Content_Types].xml",
                Array(repeating: 0x78, count: 5000)) + Fixture.zipEntry("word/document.xml"), nil, nil,
            DetectedType(mimeType: "application/zip", ext: "zip")
        ),
        (
            "zip name that merely contains word/", Fixture.zipEntry("backup/word/document.xml"), nil, nil,
            DetectedType(mimeType: "application/zip", ext: "zip")
        ),
        (
            "EBML WebM", [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84] + Array("webm".utf8),
            nil, nil, DetectedType(mimeType: "video/webm", ext: "webm")
        ),
        (
            "EBML Matroska", [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x82, 0x88] + Array("matroska".utf8), nil, nil,
            DetectedType(mimeType: "video/x-matroska", ext: "mkv")
        ),
        (
            "FLAC", Array("fLaC".utf8) + [0x00, 0x00, 0x00, 0x22], nil, nil,
            DetectedType(mimeType: "audio/flac", ext: "flac")
        ),
        (
            "TIFF little-endian", Array("II*\0".utf8) + Fixture.le32(8), nil, nil,
            DetectedType(mimeType: "image/tiff", ext: "tiff")
        ),
    ]

    @Test(arguments: nearMisses)
    func handlesNearMisses(
        _ name: String, _ bytes: [UInt8], _ declared: String?, _ filename: String?, _ expected: DetectedType
    ) {
        #expect(MIMESniffer.detect(prefix: bytes, declaredType: declared, filename: filename) == expected, "\(name)")
    }

    static let binary: [UInt8] = [0x00, 0x13, 0x37, 0xC0, 0xFF, 0xEE]

    static let fallbacks: [(String, [UInt8], String?, String?, DetectedType)] = [
        ("nothing known", binary, nil, nil, .octetStream),
        ("empty content, no claims", [], nil, nil, .octetStream),
        ("empty content, a name", [], nil, "empty.txt", .octetStream),
        // The client's word never decides: bytes that prove nothing are octets whatever the claims say.
        ("declared type", binary, "image/png", nil, .octetStream),
        (
            "declared type with parameters and case", binary, " Application/Vnd.Foo+Bar ; charset=UTF-8", "a.zip",
            .octetStream
        ),
        ("declared alias", binary, "image/jpg", nil, .octetStream),
        ("declared Windows zip alias", binary, "application/x-zip-compressed", nil, .octetStream),
        ("declared audio, named .wav", binary, "audio/mpeg", "a.wav", .octetStream),
        ("octet-stream and a known extension", binary, "application/octet-stream", "Song.MP3", .octetStream),
        ("extension alone", binary, nil, "scan.TIF", .octetStream),
        ("extension in a Windows path", binary, nil, "C:\\Users\\me\\deck.pptx", .octetStream),
        // Text stays text/plain: a textual claim names nothing the download would treat differently.
        ("text declared as CSV", Array("a,b\n1,2\n".utf8), "text/csv; charset=utf-8", nil, .plainText),
        ("text named .md", Array("# Title\n".utf8), nil, "README.md", .plainText),
        ("text declared as JSON", Array("{\"a\":1}".utf8), "application/json", nil, .plainText),
        ("text declared as an unknown text type", Array("print(1)".utf8), "text/x-python", "a.py", .plainText),
        ("text declared as an image", Array("not a picture".utf8), "image/png", "a.png", .plainText),
        ("text with an unknown extension", Array("key=value".utf8), nil, "app.conf", .plainText),
        // A claim may refine what the bytes show, within the same harmless family.
        (
            "zip named .xlsx (entries past the prefix)", Fixture.zipEntry("[Content_Types].xml"), "application/zip",
            "Budget.xlsx", DetectedType(mimeType: xlsx, ext: "xlsx")
        ),
        (
            "zip declared as EPUB", Fixture.zipEntry("mimetype", Array("application/epub+zip".utf8)),
            "application/epub+zip",
            nil, DetectedType(mimeType: "application/epub+zip", ext: "epub")
        ),
        (
            "zip named .pdf stays zip", Fixture.zipEntry("a"), nil, "a.pdf",
            DetectedType(mimeType: "application/zip", ext: "zip")
        ),
        (
            "zip named .svg stays zip", Fixture.zipEntry("a"), "image/svg+xml", "a.svg",
            DetectedType(mimeType: "application/zip", ext: "zip")
        ),
        (
            "docx named .xlsx stays docx", Fixture.office("word/document.xml"), nil, "a.xlsx",
            DetectedType(mimeType: docx, ext: "docx")
        ),
        (
            "audio-only MP4 declared as m4a", Fixture.ftyp("mp42", ["isom"]), "audio/x-m4a", "voice.m4a",
            DetectedType(mimeType: "audio/mp4", ext: "m4a")
        ),
        (
            "MP4 named .mov stays MP4", Fixture.ftyp("isom"), nil, "clip.mov",
            DetectedType(mimeType: "video/mp4", ext: "mp4")
        ),
        (
            "compound file named .doc", cfb, nil, "Report.DOC", DetectedType(mimeType: "application/msword", ext: "doc")
        ),
        (
            "compound file declared as Excel", cfb, "application/vnd.ms-excel", nil,
            DetectedType(mimeType: "application/vnd.ms-excel", ext: "xls")
        ),
        (
            "compound file declared as HTML", cfb, "text/html", "a.html",
            DetectedType(mimeType: "application/x-ole-storage", ext: "bin")
        ),
    ]

    static let cfb: [UInt8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1] + Array(repeating: 0, count: 24)

    @Test(arguments: fallbacks)
    func fallsBack(_ name: String, _ bytes: [UInt8], _ declared: String?, _ filename: String?, _ expected: DetectedType)
    {
        #expect(MIMESniffer.detect(prefix: bytes, declaredType: declared, filename: filename) == expected, "\(name)")
    }

    /// Markup and script, whatever the client calls them: never stored under a type a browser would run.
    static let activeContent: [(String, [UInt8])] = [
        ("HTML", Array("<!DOCTYPE html><html><body><script>alert(document.cookie)</script>".utf8)),
        ("HTML after a BOM and blank lines", [0xEF, 0xBB, 0xBF] + Array("\r\n\t <html><script>x()</script>".utf8)),
        ("HTML fragment", Array("<script>fetch('/api/me')</script>".utf8)),
        ("SVG with onload", Array("<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"/>".utf8)),
        ("XHTML", Array("<?xml version=\"1.0\"?><html xmlns=\"http://www.w3.org/1999/xhtml\"><script/></html>".utf8)),
        ("XML", Array("<?xml version=\"1.0\"?><note>x</note>".utf8)),
        ("HTML comment first", Array("<!-- x --><img src=x onerror=alert(1)>".utf8)),
    ]

    static let lyingClaims: [(String?, String?)] = [
        (nil, nil), ("text/html", "page.html"), ("image/svg+xml", "logo.svg"), ("application/xhtml+xml", "a.xhtml"),
        ("text/xml", "a.xml"), ("text/javascript", "a.js"), ("text/plain", "notes.txt"), ("image/png", "photo.png"),
        ("application/octet-stream", "a.bin"), ("image/jpeg; charset=utf-8", "IMG_0001.JPEG"),
    ]

    @Test(arguments: activeContent)
    func markupIsStoredAsOctetsWhateverTheClaims(_ name: String, _ bytes: [UInt8]) {
        for (declared, filename) in Self.lyingClaims {
            #expect(
                MIMESniffer.detect(prefix: bytes, declaredType: declared, filename: filename) == .octetStream,
                "\(name) declared \(declared ?? "-") named \(filename ?? "-")")
        }
    }

    static let activeClaims: [(String?, String?)] = [
        ("text/html", nil), (nil, "page.HTM"), ("image/svg+xml", nil), (nil, "logo.svg"),
        ("application/xhtml+xml", nil),
        ("text/xml", nil), ("application/xml", nil), ("application/rss+xml", nil), ("text/javascript", nil),
        ("application/javascript", nil), ("application/x-javascript", nil), (nil, "app.js"), (nil, "module.mjs"),
        ("text/css", nil), (nil, "site.css"), ("text/plain", "page.html"), ("TEXT/HTML; charset=utf-8", "notes.txt"),
    ]

    @Test(arguments: activeClaims)
    func textTheClientCallsActiveIsStoredAsOctets(_ declared: String?, _ filename: String?) {
        let script = Array("alert(document.cookie); body { color: red }".utf8)
        #expect(MIMESniffer.detect(prefix: script, declaredType: declared, filename: filename) == .octetStream)
    }

    @Test func provenBytesWinOverAnActiveName() {
        let png = DetectedType(mimeType: "image/png", ext: "png")
        #expect(MIMESniffer.detect(prefix: Fixture.png, declaredType: "text/html", filename: "index.html") == png)
        #expect(MIMESniffer.detect(prefix: Fixture.png, declaredType: "image/svg+xml", filename: "a.svg") == png)
        #expect(
            MIMESniffer.detect(prefix: Fixture.pdf, declaredType: "text/html", filename: "a.html")
                == DetectedType(mimeType: "application/pdf", ext: "pdf"))
    }

    @Test func everyAnswerIsStorableAndNoActiveTypeIs() {
        var answers = sniffCorpus.map(\.mimeType) + Self.fallbacks.map(\.4.mimeType) + Self.nearMisses.map(\.4.mimeType)
        answers += [DetectedType.plainText.mimeType, DetectedType.octetStream.mimeType]
        for type in answers { #expect(MIMESniffer.storableTypes.contains(type), "\(type)") }
        for type in MIMESniffer.storableTypes { #expect(!MIMESniffer.isActiveContent(type), "\(type)") }
        for type in [
            "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml", "text/javascript",
            "application/javascript", "application/ecmascript", "text/css", "application/atom+xml",
            "application/x-shockwave-flash",
        ] {
            #expect(MIMESniffer.isActiveContent(type), "\(type)")
            #expect(!MIMESniffer.storableTypes.contains(type), "\(type)")
        }
    }

    static let textOrBinary: [(String, [UInt8], Bool)] = [
        ("NUL", Array("abc\0def".utf8), false),
        ("SOH", [0x61, 0x01], false),
        ("vertical tab", [0x61, 0x0B], false),
        ("unit separator", [0x61, 0x1F], false),
        ("DEL is text", [0x61, 0x7F], true),
        ("lone continuation byte", [0x61, 0x80], false),
        ("overlong encoding", [0xC0, 0x80], false),
        ("overlong three bytes", [0xE0, 0x80, 0x80], false),
        ("UTF-16 surrogate", [0xED, 0xA0, 0x80], false),
        ("above U+10FFFF", [0xF4, 0x90, 0x80, 0x80], false),
        ("invalid lead byte", [0xF8, 0x88, 0x80, 0x80, 0x80], false),
        ("Latin-1 is not UTF-8", Array("caf".utf8) + [0xE9], false),
        ("sequence cut short in a whole file", Array("ok ".utf8) + [0xE4, 0xBD], false),
        ("only a BOM", [0xEF, 0xBB, 0xBF], true),
        ("U+10FFFF", [0xF4, 0x8F, 0xBF, 0xBF], true),
    ]

    @Test(arguments: textOrBinary)
    func tellsTextFromBinary(_ name: String, _ bytes: [UInt8], _ isText: Bool) {
        let detected = MIMESniffer.detect(prefix: bytes, declaredType: nil, filename: nil)
        #expect(detected == (isText ? .plainText : .octetStream), "\(name)")
    }

    @Test func aMultiByteCharacterCutByThePrefixEndIsStillText() {
        let text = Array(repeating: UInt8(ascii: "a"), count: MIMESniffer.prefixLength - 1) + Array("中".utf8)
        #expect(
            MIMESniffer.detect(prefix: Array(text.prefix(MIMESniffer.prefixLength)), declaredType: nil, filename: nil)
                == .plainText)
        #expect(MIMESniffer.detect(prefix: text, declaredType: nil, filename: nil) == .plainText)
        // Binary bytes past the prefix are not looked at.
        let lateNUL = Array(repeating: UInt8(ascii: "a"), count: MIMESniffer.prefixLength) + [0]
        #expect(MIMESniffer.detect(prefix: lateNUL, declaredType: nil, filename: nil) == .plainText)
    }

    static let extensions: [(String, String?)] = [
        ("photo.jpg", "jpg"), ("Photo.JPEG", "jpg"), ("a.jpe", "jpg"), ("scan.tif", "tiff"), ("page.HTM", "html"),
        ("archive.tar.gz", "gz"), ("a.7z", "7z"), ("dir/sub/file.Mp4", "mp4"), ("C:\\x\\y.PNG", "png"),
        ("noext", nil), (".bashrc", nil), ("dir/.hidden", nil), ("a.", nil), ("a.toolongext1", nil),
        ("a.abcdefghij", "abcdefghij"), ("a.mp3 ", nil), ("a.é", nil), ("a.tar-gz", nil), ("dir.d/file", nil),
        ("", nil),
    ]

    @Test(arguments: extensions)
    func normalisesExtensions(_ filename: String, _ expected: String?) {
        #expect(MIMESniffer.fileExtension(of: filename) == expected)
    }

    static let mediaTypes: [(String, String?)] = [
        ("image/png", "image/png"), ("Image/PNG", "image/png"), (" text/plain ; charset=utf-8", "text/plain"),
        ("application/vnd.api+json", "application/vnd.api+json"), ("image/pjpeg", "image/jpeg"),
        ("image", nil), ("image/", nil), ("/png", nil), ("image/png/x", nil), ("", nil), ("image png", nil),
        ("ima ge/png", nil), ("image/pn\"g", nil), ("图片/png", nil),
    ]

    @Test(arguments: mediaTypes)
    func normalisesMediaTypes(_ value: String, _ expected: String?) {
        #expect(MIMESniffer.normalizedMediaType(value) == expected)
    }
}

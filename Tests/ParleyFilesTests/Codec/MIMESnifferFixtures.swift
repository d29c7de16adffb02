/// Minimal but real files of each type the sniffer knows, built byte by byte.
enum Fixture {
    /// A valid 1x1 RGBA PNG (signature, IHDR, IDAT, IEND with their CRCs).
    static let png: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
        0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
        0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
        0x42, 0x60, 0x82,
    ]

    /// A valid 1x1 transparent GIF89a.
    static let gif: [UInt8] = [
        0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xFF, 0xFF, 0xFF,
        0x00, 0x00, 0x00, 0x21, 0xF9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2C, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3B,
    ]

    /// The head of a baseline JFIF JPEG: SOI, the APP0 JFIF segment, a quantisation table start, and EOI.
    static let jpeg: [UInt8] =
        [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8)
        + [0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]
        + [0xFF, 0xDB, 0x00, 0x43, 0x00] + Array(repeating: 0x01, count: 64) + [0xFF, 0xD9]

    /// An EXIF JPEG as phones write it (APP1 first).
    static let jpegExif: [UInt8] =
        [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x16] + Array("Exif\0\0MM\0*".utf8) + Array(repeating: 0, count: 10)

    /// A 1x1 lossless WebP: RIFF, the `WEBP` form type and a `VP8L` chunk.
    static let webp: [UInt8] =
        Array("RIFF".utf8) + le32(26) + Array("WEBPVP8L".utf8) + le32(13)
        + [0x2F, 0x00, 0x00, 0x00, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xFE, 0x07, 0x00]

    /// A WAV header (RIFF/WAVE with a PCM `fmt ` chunk and an empty `data` chunk).
    static let wav: [UInt8] =
        Array("RIFF".utf8) + le32(36) + Array("WAVEfmt ".utf8) + le32(16)
        + [0x01, 0x00, 0x01, 0x00] + le32(8000) + le32(16000) + [0x02, 0x00, 0x10, 0x00] + Array("data".utf8) + le32(0)

    /// An ISO base media file: an `ftyp` box with the given brands, then an empty `mdat` box.
    static func ftyp(_ major: String, _ compatible: [String] = []) -> [UInt8] {
        let brands = compatible.flatMap { Array($0.utf8) }
        return be32(16 + brands.count) + Array("ftyp".utf8) + Array(major.utf8) + be32(0) + brands
            + be32(8) + Array("mdat".utf8)
    }

    static let pdf: [UInt8] = Array(
        """
        %PDF-1.4
        1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
        2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj
        trailer << /Root 1 0 R >>
        %%EOF

        """.utf8)

    /// A zip local file header (APPNOTE.TXT §4.3.7) for a stored entry, followed by its data.
    static func zipEntry(_ name: String, _ data: [UInt8] = Array("<xml/>".utf8), dataDescriptor: Bool = false)
        -> [UInt8]
    {
        let nameBytes = Array(name.utf8)
        return [0x50, 0x4B, 0x03, 0x04, 0x14, 0x00] + le16(dataDescriptor ? 0x08 : 0) + le16(0) + le16(0) + le16(0)
            + le32(0) + le32(dataDescriptor ? 0 : data.count) + le32(dataDescriptor ? 0 : data.count)
            + le16(nameBytes.count) + le16(0) + nameBytes + data
    }

    /// An Office Open XML package as Word writes it: `[Content_Types].xml`, `_rels/.rels`, then the main part.
    static func office(_ mainPart: String) -> [UInt8] {
        zipEntry("[Content_Types].xml", Array(repeating: UInt8(ascii: "x"), count: 400))
            + zipEntry("_rels/.rels", Array(repeating: UInt8(ascii: "y"), count: 300), dataDescriptor: true)
            + [0x50, 0x4B, 0x07, 0x08] + le32(0) + le32(300) + le32(300)
            + zipEntry(mainPart) + [0x50, 0x4B, 0x05, 0x06] + Array(repeating: 0, count: 18)
    }

    /// The first page of an Ogg stream (RFC 3533 §6) whose one segment is `payload`.
    static func oggPage(_ payload: [UInt8]) -> [UInt8] {
        Array("OggS".utf8) + [0x00, 0x02] + Array(repeating: 0, count: 8) + le32(0x1234) + le32(0) + le32(0)
            + [0x01, UInt8(payload.count)] + payload
    }

    /// An Opus identification header (RFC 7845 §5.1): version 1, mono, pre-skip 312, 48 kHz.
    static let opusHead: [UInt8] =
        Array("OpusHead".utf8) + [0x01, 0x01, 0x38, 0x01] + le32(48000) + [0x00, 0x00, 0x00]
    /// A Vorbis identification header start (Vorbis I §4.2.2).
    static let vorbisHead: [UInt8] =
        [0x01] + Array("vorbis".utf8) + le32(0) + [0x02] + le32(44100) + Array(repeating: 0, count: 14)

    /// An AMR-NB file: the magic and one 12.2 kbit/s frame.
    static let amr: [UInt8] = Array("#!AMR\n".utf8) + [0x3C] + Array(repeating: 0x55, count: 31)
    /// One ADTS frame header (MPEG-4 AAC LC, 44.1 kHz, stereo) and a few payload bytes.
    static let adts: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC, 0x21, 0x00, 0x49, 0x90]
    /// The same frame as MPEG-2 AAC.
    static let adtsMPEG2: [UInt8] = [0xFF, 0xF9, 0x50, 0x80, 0x02, 0x1F, 0xFC, 0x21, 0x00, 0x49, 0x90]
    /// An MPEG-1 Layer III frame header (128 kbit/s, 44.1 kHz) and padding.
    static let mp3Frame: [UInt8] = [0xFF, 0xFB, 0x90, 0x64] + Array(repeating: 0, count: 32)
    /// An MPEG-2 Layer III frame header (64 kbit/s, 22.05 kHz).
    static let mp3FrameMPEG2: [UInt8] = [0xFF, 0xF3, 0x80, 0xC4] + Array(repeating: 0, count: 32)
    /// An ID3v2.4 tag with one TIT2 frame, then an MP3 frame.
    static let mp3ID3: [UInt8] = id3(Array("TIT2".utf8) + [0, 0, 0, 6, 0, 0, 3] + Array("Song".utf8) + [0]) + mp3Frame

    /// An ID3v2.4 header (synchsafe size) around `frames`.
    static func id3(_ frames: [UInt8]) -> [UInt8] {
        let size = frames.count
        return Array("ID3".utf8) + [0x04, 0x00, 0x00]
            + [UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F)] + frames
    }

    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
    static func be32(_ value: Int) -> [UInt8] { (0..<4).reversed().map { UInt8(value >> (8 * $0) & 0xFF) } }
}

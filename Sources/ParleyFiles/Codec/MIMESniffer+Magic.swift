extension MIMESniffer {
    /// The type the leading bytes prove, from signatures in the WHATWG MIME Sniffing standard and the
    /// formats' own specifications; nil when none matches.
    static func magicType(_ bytes: ArraySlice<UInt8>) -> DetectedType? {
        let b = Array(bytes)
        func starts(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + signature.count && b[offset..<(offset + signature.count)].elementsEqual(signature)
        }
        func starts(_ ascii: String, at offset: Int = 0) -> Bool { starts(Array(ascii.utf8), at: offset) }

        if starts([0xFF, 0xD8, 0xFF]) { return DetectedType(mimeType: "image/jpeg", ext: "jpg") }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return DetectedType(mimeType: "image/png", ext: "png")
        }
        if starts("GIF87a") || starts("GIF89a") { return DetectedType(mimeType: "image/gif", ext: "gif") }
        if starts("RIFF") {
            if starts("WEBP", at: 8) { return DetectedType(mimeType: "image/webp", ext: "webp") }
            if starts("WAVE", at: 8) { return DetectedType(mimeType: "audio/wav", ext: "wav") }
            if starts("AVI ", at: 8) { return DetectedType(mimeType: "video/x-msvideo", ext: "avi") }
            return nil
        }
        if starts("ftyp", at: 4) { return isoBaseMediaType(b) }
        if starts("%PDF-") { return DetectedType(mimeType: "application/pdf", ext: "pdf") }
        if starts([0x50, 0x4B, 0x03, 0x04]) { return zipType(b) }
        // An empty archive is only its end-of-central-directory record.
        if starts([0x50, 0x4B, 0x05, 0x06]) { return DetectedType(mimeType: "application/zip", ext: "zip") }
        if starts([0x1F, 0x8B, 0x08]) { return DetectedType(mimeType: "application/gzip", ext: "gz") }
        if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) {
            return DetectedType(mimeType: "application/x-7z-compressed", ext: "7z")
        }
        if starts("Rar!\u{1A}\u{07}") { return DetectedType(mimeType: "application/vnd.rar", ext: "rar") }
        if starts([0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) {
            return DetectedType(mimeType: compoundFileType, ext: "bin")
        }
        // POSIX ustar (and GNU tar): the magic sits in the first header block, after the name and mode fields.
        if starts("ustar", at: 257) { return DetectedType(mimeType: "application/x-tar", ext: "tar") }
        if starts("OggS\0") { return oggType(b) }
        if starts("#!AMR\n") { return DetectedType(mimeType: "audio/amr", ext: "amr") }
        if starts("#!AMR-WB\n") { return DetectedType(mimeType: "audio/amr-wb", ext: "awb") }
        if starts("fLaC") { return DetectedType(mimeType: "audio/flac", ext: "flac") }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) {
            // Matroska and WebM share EBML; the DocType element near the start tells them apart.
            let isWebM = b.prefix(64).indices.contains { index in starts("webm", at: index) }
            return isWebM
                ? DetectedType(mimeType: "video/webm", ext: "webm")
                : DetectedType(mimeType: "video/x-matroska", ext: "mkv")
        }
        if starts("II*\0") || starts("MM\0*") { return DetectedType(mimeType: "image/tiff", ext: "tiff") }
        if starts("BM"), b.count >= 18, [12, 40, 52, 56, 108, 124].contains(littleEndian(b, at: 14, width: 4)) {
            // "BM" alone is also how plenty of text starts: require a known DIB header size too.
            return DetectedType(mimeType: "image/bmp", ext: "bmp")
        }
        if starts("ID3"), b.count >= 10, (2...4).contains(b[3]) {
            // ID3v2 (id3.org, §3.1): a 10-byte header whose size is four 7-bit bytes. It mostly precedes MP3,
            // but may tag ADTS AAC too; look at the first frame when it lies within the prefix.
            let size = b[6..<10].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
            let frame = 10 + size + (b[5] & 0x10 != 0 ? 10 : 0)
            if frame + 2 <= b.count, isADTSHeader(b[frame], b[frame + 1]) {
                return DetectedType(mimeType: "audio/aac", ext: "aac")
            }
            return DetectedType(mimeType: "audio/mpeg", ext: "mp3")
        }
        if b.count >= 2, isADTSHeader(b[0], b[1]) { return DetectedType(mimeType: "audio/aac", ext: "aac") }
        if b.count >= 3, isMP3FrameHeader(b[0], b[1], b[2]) { return DetectedType(mimeType: "audio/mpeg", ext: "mp3") }
        return nil
    }

    /// ADTS (ISO/IEC 13818-7 / 14496-3): a 12-bit sync word and layer `00`; `FFF1` (MPEG-4) and `FFF9` (MPEG-2)
    /// without CRC, `FFF0` / `FFF8` with.
    static func isADTSHeader(_ first: UInt8, _ second: UInt8) -> Bool {
        first == 0xFF && second & 0xF6 == 0xF0
    }

    /// An MPEG audio frame header (ISO/IEC 11172-3): an 11-bit sync, a version other than the reserved `01`,
    /// layer III (`01`), and a bitrate and sample rate index that are not the invalid all-ones values.
    static func isMP3FrameHeader(_ first: UInt8, _ second: UInt8, _ third: UInt8) -> Bool {
        first == 0xFF && second & 0xE0 == 0xE0 && (second >> 3) & 0x03 != 0x01 && (second >> 1) & 0x03 == 0x01
            && third >> 4 != 0x0F && (third >> 2) & 0x03 != 0x03
    }

    /// ISO base media files (ISO/IEC 14496-12 §4.3): the `ftyp` box names a major brand and compatible ones.
    /// The major brand decides when it is known; otherwise the first known compatible brand does. HEIF files
    /// often carry the generic `mif1` as major brand with `heic` among the compatible ones.
    static func isoBaseMediaType(_ b: [UInt8]) -> DetectedType? {
        guard b.count >= 12 else { return nil }
        let boxSize = bigEndian(b, at: 0, width: 4)
        var compatible: [String] = []
        var offset = 16
        while offset + 4 <= min(boxSize, b.count) {
            compatible.append(String(decoding: b[offset..<(offset + 4)], as: UTF8.self))
            offset += 4
        }
        let major = String(decoding: b[8..<12], as: UTF8.self)
        let brands = [major] + compatible
        let heic: Set = ["heic", "heix", "heim", "heis", "hevc", "hevx"]
        let avif: Set = ["avif", "avis"]
        let heif: Set = ["mif1", "msf1", "heif"]
        if heif.contains(major) {
            if brands.contains(where: heic.contains) { return DetectedType(mimeType: "image/heic", ext: "heic") }
            if brands.contains(where: avif.contains) { return DetectedType(mimeType: "image/avif", ext: "avif") }
            return DetectedType(mimeType: "image/heif", ext: "heif")
        }
        for brand in brands {
            if heic.contains(brand) { return DetectedType(mimeType: "image/heic", ext: "heic") }
            if avif.contains(brand) { return DetectedType(mimeType: "image/avif", ext: "avif") }
            if heif.contains(brand) { return DetectedType(mimeType: "image/heif", ext: "heif") }
            if brand == "qt  " { return DetectedType(mimeType: "video/quicktime", ext: "mov") }
            if brand == "M4A " || brand == "M4B " { return DetectedType(mimeType: "audio/mp4", ext: "m4a") }
            if brand.hasPrefix("3gp") || brand.hasPrefix("3gg") {
                return DetectedType(mimeType: "video/3gpp", ext: "3gp")
            }
            if ["isom", "iso2", "iso3", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "dash", "M4V ", "mmp4"]
                .contains(brand)
            {
                return DetectedType(mimeType: "video/mp4", ext: "mp4")
            }
        }
        return nil
    }

    /// Office Open XML documents are zip archives whose part names start with `word/`, `xl/` or `ppt/`
    /// (ECMA-376 Part 2). Every local file header within the prefix is read (APPNOTE.TXT §4.3.7), found by its
    /// signature since entries written with a data descriptor do not give their size up front.
    static func zipType(_ b: [UInt8]) -> DetectedType {
        var offset = 0
        while offset + 30 <= b.count {
            if b[offset] == 0x50, b[offset + 1] == 0x4B, b[offset + 2] == 0x03, b[offset + 3] == 0x04 {
                let nameLength = littleEndian(b, at: offset + 26, width: 2)
                let name = b[(offset + 30)..<min(offset + 30 + nameLength, b.count)]
                func named(_ prefix: String) -> Bool { name.starts(with: prefix.utf8) }
                if named("word/") {
                    return DetectedType(
                        mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", ext: "docx"
                    )
                }
                if named("xl/") {
                    return DetectedType(
                        mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ext: "xlsx")
                }
                if named("ppt/") {
                    return DetectedType(
                        mimeType: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
                        ext: "pptx")
                }
                offset += 30
            } else {
                offset += 1
            }
        }
        return DetectedType(mimeType: "application/zip", ext: "zip")
    }

    /// Ogg (RFC 3533 §6): the first page's payload starts after 27 header bytes and the segment table, and
    /// opens with the codec's identification header (RFC 7845 §5.1: `OpusHead`).
    static func oggType(_ b: [UInt8]) -> DetectedType {
        guard b.count > 27 else { return DetectedType(mimeType: "audio/ogg", ext: "ogg") }
        let payload = b.dropFirst(27 + Int(b[26]))
        if payload.starts(with: "OpusHead".utf8) { return DetectedType(mimeType: "audio/ogg", ext: "opus") }
        if payload.starts(with: [0x80] + Array("theora".utf8)) {
            return DetectedType(mimeType: "video/ogg", ext: "ogv")
        }
        return DetectedType(mimeType: "audio/ogg", ext: "ogg")
    }

    static func bigEndian(_ b: [UInt8], at offset: Int, width: Int) -> Int {
        b[offset..<(offset + width)].reduce(0) { $0 << 8 | Int($1) }
    }

    static func littleEndian(_ b: [UInt8], at offset: Int, width: Int) -> Int {
        b[offset..<(offset + width)].reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}

extension MIMESniffer {
    /// Whether the bytes read as text: well-formed UTF-8 (after an optional BOM) without the "binary data
    /// bytes" of the WHATWG MIME Sniffing standard (§7.1: C0 controls other than HT, LF, FF, CR and ESC).
    /// When `truncated`, a multi-byte sequence cut off by the end of the prefix is not held against it.
    static func looksLikeText(_ bytes: ArraySlice<UInt8>, truncated: Bool) -> Bool {
        var b = bytes
        if b.starts(with: [0xEF, 0xBB, 0xBF]) { b = b.dropFirst(3) }
        guard !b.isEmpty else { return !bytes.isEmpty }
        var index = b.startIndex
        while index < b.endIndex {
            let lead = b[index]
            if lead < 0x80 {
                guard lead >= 0x20 || [0x09, 0x0A, 0x0C, 0x0D, 0x1B].contains(lead) else { return false }
                index += 1
                continue
            }
            // RFC 3629 §4: the second byte's range depends on the lead byte (no overlongs or surrogates, nothing
            // above U+10FFFF); later continuation bytes are 80...BF.
            let length: Int
            let second: ClosedRange<UInt8>
            switch lead {
            case 0xC2...0xDF: (length, second) = (2, 0x80...0xBF)
            case 0xE0: (length, second) = (3, 0xA0...0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (length, second) = (3, 0x80...0xBF)
            case 0xED: (length, second) = (3, 0x80...0x9F)
            case 0xF0: (length, second) = (4, 0x90...0xBF)
            case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
            case 0xF4: (length, second) = (4, 0x80...0x8F)
            default: return false
            }
            for offset in 1..<length {
                guard index + offset < b.endIndex else { return truncated }
                let byte = b[index + offset]
                guard offset == 1 ? second.contains(byte) : (0x80...0xBF).contains(byte) else { return false }
            }
            index += length
        }
        return true
    }
}

extension JSONParser {
    /// Parses a string starting at its opening quote (RFC 8259 §7). Strings without escapes, the
    /// common case, become a `String` straight from the input bytes.
    mutating func parseString() throws(JSONParseError) -> String {
        let quote = position
        position += 1
        let contentStart = position
        while true {
            // Plain ASCII eight bytes at a time: most strings are ids, names and words.
            while end - position >= 8 {
                let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
                if Self.needsAttention(word) { break }
                position += 8
            }
            guard position < end else { throw .unterminatedString(at: quote) }
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeBufferPointer(start: base + contentStart, count: position - contentStart)
                position += 1
                return String(decoding: content, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                return try parseEscapedString(quote: quote, contentStart: contentStart)
            } else {
                try skipContentByte(byte)
            }
        }
    }

    /// Steps over a byte of a string's content that is neither a quote nor a backslash: a control character is an
    /// error (RFC 8259 §7), a non-ASCII byte starts a UTF-8 sequence checked whole.
    @inline(__always)
    private mutating func skipContentByte(_ byte: UInt8) throws(JSONParseError) {
        if byte < 0x20 {
            throw .controlCharacter(at: position)
        } else if byte >= 0x80 {
            try skipUTF8Sequence()
        } else {
            position += 1
        }
    }

    /// Whether any of the eight bytes is a quote, a backslash, a control character or non-ASCII.
    /// Each test is the classic "has a zero byte" trick, which is exact about whether such a byte
    /// exists (it can only misreport which one, and the caller rescans bytewise).
    @inline(__always)
    static func needsAttention(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let hasQuote = (quotes &- ones) & ~quotes
        let hasBackslash = (backslashes &- ones) & ~backslashes
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl | word) & highBits != 0
    }

    /// The rest of a string once an escape turns up: decodes into `scratch`, copying plain runs
    /// in one piece.
    private mutating func parseEscapedString(quote: Int, contentStart: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = contentStart
        while true {
            guard position < end else { throw .unterminatedString(at: quote) }
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                appendRun(from: runStart)
                position += 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                appendRun(from: runStart)
                try appendEscape(quote: quote)
                runStart = position
            } else {
                try skipContentByte(byte)
            }
        }
    }

    private mutating func appendRun(from runStart: Int) {
        if position > runStart {
            scratch.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: position - runStart))
        }
    }

    /// Decodes the escape at `position` (a backslash) into `scratch` (RFC 8259 §7).
    private mutating func appendEscape(quote: Int) throws(JSONParseError) {
        let escapeStart = position
        guard end - position >= 2 else { throw .unterminatedString(at: quote) }
        let letter = base[position + 1]
        position += 2
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(letter)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try readHex4(escapeStart: escapeStart)
            var scalar = unit
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate is only valid as the first half of an escaped pair.
                guard end - position >= 2, base[position] == UInt8(ascii: "\\"),
                    base[position + 1] == UInt8(ascii: "u")
                else { throw .unpairedSurrogate(at: escapeStart) }
                let lowStart = position
                position += 2
                let low = try readHex4(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else { throw .unpairedSurrogate(at: escapeStart) }
                scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            case 0xDC00...0xDFFF:
                throw .unpairedSurrogate(at: escapeStart)
            default:
                break
            }
            appendUTF8(scalar)
        default:
            throw .invalidEscape(at: escapeStart)
        }
    }

    /// Reads the four hex digits after `\u`.
    private mutating func readHex4(escapeStart: Int) throws(JSONParseError) -> UInt32 {
        guard end - position >= 4 else { throw .invalidUnicodeEscape(at: escapeStart) }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = base[position + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .invalidUnicodeEscape(at: escapeStart)
            }
            value = value << 4 | UInt32(digit)
        }
        position += 4
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Validates one multi-byte UTF-8 sequence at `position` and steps over it. Follows the
    /// well-formed byte sequences of Unicode 15 Table 3-7, which excludes overlong forms
    /// (C0, C1, E0 80-9F, F0 80-8F), UTF-16 surrogates (ED A0-BF) and anything above U+10FFFF
    /// (F4 90-BF, F5-FF).
    private mutating func skipUTF8Sequence() throws(JSONParseError) {
        let lead = base[position]
        let available = end - position
        let length: Int
        var secondLow: UInt8 = 0x80
        var secondHigh: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondLow = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondHigh = 0x9F
        case 0xF0: length = 4; secondLow = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondHigh = 0x8F
        default: throw .invalidUTF8(at: position)
        }
        guard available >= length else { throw .invalidUTF8(at: position) }
        let second = base[position + 1]
        guard second >= secondLow, second <= secondHigh else { throw .invalidUTF8(at: position) }
        for offset in 2..<length where base[position + offset] & 0xC0 != 0x80 {
            throw .invalidUTF8(at: position)
        }
        position += length
    }
}

/// Byte classes and the line scanner shared by the head, chunk-size lines and trailers.
extension HTTPRequestParser {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let sp = UInt8(ascii: " ")
    static let htab = UInt8(ascii: "\t")

    /// tchar (RFC 9110 §5.6.2) for bytes 0..<64 and 64..<128, one bit per byte:
    /// "!#$%&'*+-.^_`|~", DIGIT, ALPHA.
    private static let tokenMaskLow: UInt64 = 0x03ff_6cfa_0000_0000
    private static let tokenMaskHigh: UInt64 = 0x57ff_ffff_c7ff_fffe

    @inline(__always)
    static func isTokenChar(_ byte: UInt8) -> Bool {
        if byte < 64 { return (tokenMaskLow >> UInt64(byte)) & 1 == 1 }
        if byte < 128 { return (tokenMaskHigh >> UInt64(byte &- 64)) & 1 == 1 }
        return false
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == sp || byte == htab
    }

    /// field-vchar / obs-text plus SP and HTAB (RFC 9110 §5.5): every byte except CTLs other than HTAB.
    @inline(__always)
    static func isFieldValueChar(_ byte: UInt8) -> Bool {
        (byte >= 0x20 && byte != 0x7f) || byte == htab
    }

    enum LineScan {
        case needMore
        /// Offset just past the CRLF that ends the line (or the empty line that ends the section).
        case complete(end: Int)
        /// No acceptable end exists within the window.
        case overLimit
    }

    /// Scans `bytes` from `cursor` for the CRLF that ends a line or, with `untilEmptyLine`, for the empty
    /// line that ends a field section. Resumable: `cursor` and `lineStart` persist across calls.
    ///
    /// Only CRLF ends a line; a bare CR or bare LF fails (RFC 9112 §2.2 lets a server reject them, and
    /// accepting them is how request smuggling through lenient proxies works). A line or section is
    /// acceptable only if it ends within `window` bytes; errors are decided in byte order, so the outcome
    /// does not depend on how the input was split into appends.
    static func scanLines(
        _ bytes: UnsafeBufferPointer<UInt8>,
        cursor: inout Int,
        lineStart: inout Int,
        window: Int,
        untilEmptyLine: Bool
    ) throws(HTTPParseError) -> LineScan {
        let count = bytes.count
        let limit = min(count, window)
        var index = cursor
        while index < limit {
            let byte = bytes[index]
            if byte > cr {
                index += 1
                continue
            }
            if byte == lf { throw .malformed("bare LF in line") }
            if byte == cr {
                if index + 2 > window { return .overLimit }
                guard index + 1 < count else {
                    cursor = index
                    return .needMore
                }
                guard bytes[index + 1] == lf else { throw .malformed("bare CR in line") }
                let end = index + 2
                if !untilEmptyLine || index == lineStart {
                    cursor = end
                    return .complete(end: end)
                }
                lineStart = end
                index = end
                continue
            }
            index += 1
        }
        cursor = index
        return count >= window ? .overLimit : .needMore
    }
}

/// The chunked transfer coding (RFC 9112 §7.1).
extension HTTPRequestParser {
    /// Parses `chunk-size [ chunk-ext ] CRLF`; false while more bytes are needed.
    mutating func parseChunkLine() throws(HTTPParseError) -> Bool {
        var cursor = scanOffset
        var lineStart = 0
        let readIndex = self.readIndex
        let parsed = try buffer.withUnsafeBufferPointer {
            (all) throws(HTTPParseError) -> (size: Int, end: Int)? in
            let bytes = UnsafeBufferPointer(rebasing: all[readIndex...])
            switch try Self.scanLines(
                bytes, cursor: &cursor, lineStart: &lineStart, window: Self.maxChunkLineBytes + 2,
                untilEmptyLine: false)
            {
            case .needMore: return nil
            case .overLimit: throw .malformed("chunk-size line too long")
            case .complete(let end): return (try Self.parseChunkSize(bytes, end: end - 2), end)
            }
        }
        guard let parsed else {
            scanOffset = cursor
            return false
        }
        self.readIndex += parsed.end
        scanOffset = 0
        if parsed.size == 0 {
            state = .trailers
            return true
        }
        // Refuse as soon as the announced de-chunked total exceeds the limit, before the data arrives.
        if parsed.size > bodyLimit - chunkedTotal { throw .bodyTooLarge }
        chunkedTotal += parsed.size
        state = .chunkData(remaining: parsed.size)
        return true
    }

    /// The CRLF that must follow each chunk's data; false while more bytes are needed.
    mutating func consumeChunkDataCRLF() throws(HTTPParseError) -> Bool {
        let available = buffer.count - readIndex
        guard available > 0 else { return false }
        guard buffer[readIndex] == Self.cr else { throw .malformed("missing CRLF after chunk data") }
        guard available > 1 else { return false }
        guard buffer[readIndex + 1] == Self.lf else { throw .malformed("missing CRLF after chunk data") }
        readIndex += 2
        return true
    }

    /// Parses the trailer section (RFC 9112 §7.1.2): fields are validated like headers, then discarded.
    /// It shares the header budget with the request's head. False while more bytes are needed.
    mutating func parseTrailers() throws(HTTPParseError) -> Bool {
        var cursor = scanOffset
        var lineStart = lineStartOffset
        let window = Self.sectionWindow(budget: limits.maxHeaderBytes - headByteCount)
        let readIndex = self.readIndex
        let end = try buffer.withUnsafeBufferPointer { (all) throws(HTTPParseError) -> Int? in
            let bytes = UnsafeBufferPointer(rebasing: all[readIndex...])
            switch try Self.scanLines(
                bytes, cursor: &cursor, lineStart: &lineStart, window: window, untilEmptyLine: true)
            {
            case .needMore:
                return nil
            case .overLimit:
                throw .headersTooLarge
            case .complete(let end):
                var start = 0
                while start < end - 2 {
                    var stop = start
                    while bytes[stop] != Self.cr { stop += 1 }
                    _ = try Self.parseFieldLine(bytes, start: start, end: stop)
                    start = stop + 2
                }
                return end
            }
        }
        guard let end else {
            scanOffset = cursor
            lineStartOffset = lineStart
            return false
        }
        self.readIndex += end
        return true
    }

    /// chunk-size = 1*HEXDIG, then chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-value ] ),
    /// ext-value = token / quoted-string. Extensions are validated and ignored.
    static func parseChunkSize(_ bytes: UnsafeBufferPointer<UInt8>, end: Int) throws(HTTPParseError) -> Int {
        var index = 0
        var size = 0
        while index < end, let digit = hexValue(bytes[index]) {
            // Reject sizes that do not fit rather than wrapping around (RFC 9112 §7.1).
            guard size <= (Int.max - digit) / 16 else { throw .malformed("chunk size too large") }
            size = size * 16 + digit
            index += 1
        }
        guard index > 0 else { throw .malformed("invalid chunk size") }
        while index < end {
            while index < end && isWhitespace(bytes[index]) { index += 1 }
            guard index < end, bytes[index] == UInt8(ascii: ";") else { throw .malformed("invalid chunk size") }
            index += 1
            while index < end && isWhitespace(bytes[index]) { index += 1 }
            let nameStart = index
            while index < end && isTokenChar(bytes[index]) { index += 1 }
            guard index > nameStart else { throw .malformed("invalid chunk extension") }
            while index < end && isWhitespace(bytes[index]) { index += 1 }
            guard index < end, bytes[index] == UInt8(ascii: "=") else { continue }
            index += 1
            while index < end && isWhitespace(bytes[index]) { index += 1 }
            if index < end && bytes[index] == UInt8(ascii: "\"") {
                index = try skipQuotedString(bytes, from: index, end: end)
            } else {
                let valueStart = index
                while index < end && isTokenChar(bytes[index]) { index += 1 }
                guard index > valueStart else { throw .malformed("invalid chunk extension") }
            }
        }
        return size
    }

    /// quoted-string (RFC 9110 §5.6.4) starting at the opening quote; returns the index after the closing one.
    private static func skipQuotedString(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, end: Int
    ) throws(HTTPParseError) -> Int {
        var index = start + 1
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { return index + 1 }
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard index < end else { break }
            }
            guard isFieldValueChar(bytes[index]) else { throw .malformed("invalid chunk extension") }
            index += 1
        }
        throw .malformed("invalid chunk extension")
    }

    @inline(__always)
    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte &- UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte &- UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte &- UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}

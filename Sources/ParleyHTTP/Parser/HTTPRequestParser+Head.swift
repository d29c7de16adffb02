/// The request line and header section (RFC 9112 §3, §5).
extension HTTPRequestParser {
    /// Parses the head once it is complete; nil while more bytes are needed.
    mutating func parseHead() throws(HTTPParseError) -> HTTPParserEvent? {
        if scanOffset == 0 { skipLeadingEmptyLines() }
        var cursor = scanOffset
        var lineStart = lineStartOffset
        let window = Self.sectionWindow(budget: limits.maxHeaderBytes)
        let readIndex = self.readIndex
        let parsed = try buffer.withUnsafeBufferPointer {
            (all) throws(HTTPParseError) -> (head: HTTPRequestHead, end: Int)? in
            let bytes = UnsafeBufferPointer(rebasing: all[readIndex...])
            switch try Self.scanLines(
                bytes, cursor: &cursor, lineStart: &lineStart, window: window, untilEmptyLine: true)
            {
            case .needMore: return nil
            case .overLimit: throw .headersTooLarge
            case .complete(let end): return (try Self.parseHead(bytes, end: end), end)
            }
        }
        guard let parsed else {
            scanOffset = cursor
            lineStartOffset = lineStart
            return nil
        }
        self.readIndex += parsed.end
        scanOffset = 0
        lineStartOffset = 0
        headByteCount = parsed.end - 2
        bodyLimit = max(0, limits.maxBodyBytes)
        chunkedTotal = 0
        state = .bodyStart(parsed.head.framing)
        return .head(parsed.head)
    }

    /// A server SHOULD ignore at least one empty line received before the request line (RFC 9112 §2.2).
    private mutating func skipLeadingEmptyLines() {
        while buffer.count - readIndex >= 2 && buffer[readIndex] == Self.cr && buffer[readIndex + 1] == Self.lf {
            readIndex += 2
        }
    }

    /// Parses a complete head: `bytes[..<end]` is the request line and field lines, each ending in CRLF,
    /// followed by the empty line. The scanner has already rejected bare CR and bare LF.
    static func parseHead(_ bytes: UnsafeBufferPointer<UInt8>, end: Int) throws(HTTPParseError) -> HTTPRequestHead {
        var lineEnd = 0
        while bytes[lineEnd] != cr { lineEnd += 1 }
        let line = try parseRequestLine(bytes, end: lineEnd)

        var headers = HTTPHeaders()
        headers.reserveCapacity(16)
        var start = lineEnd + 2
        let sectionEnd = end - 2
        while start < sectionEnd {
            var stop = start
            while bytes[stop] != cr { stop += 1 }
            let field = try parseFieldLine(bytes, start: start, end: stop)
            headers.appendLowercased(
                name: lowercasedString(bytes, field.name),
                value: String(decoding: UnsafeBufferPointer(rebasing: bytes[field.value]), as: UTF8.self))
            start = stop + 2
        }
        return try makeHead(line, headers: headers)
    }

    /// Splits a field line into its name and its value with OWS trimmed (RFC 9112 §5, RFC 9110 §5.5).
    static func parseFieldLine(
        _ bytes: UnsafeBufferPointer<UInt8>, start: Int, end: Int
    ) throws(HTTPParseError) -> (name: Range<Int>, value: Range<Int>) {
        // obs-fold, and whitespace between the start-line and the first field (RFC 9112 §5.2, §2.2).
        if isWhitespace(bytes[start]) { throw .malformed("obsolete line folding in header") }
        var colon = start
        while colon < end && isTokenChar(bytes[colon]) { colon += 1 }
        guard colon < end else { throw .malformed("header line without colon") }
        guard bytes[colon] == UInt8(ascii: ":") else {
            // No whitespace is allowed between the field name and the colon (RFC 9112 §5.1).
            if isWhitespace(bytes[colon]) { throw .malformed("whitespace before colon in header") }
            throw .malformed("invalid character in header name")
        }
        guard colon > start else { throw .malformed("empty header name") }
        var valueStart = colon + 1
        var valueEnd = end
        while valueStart < valueEnd && isWhitespace(bytes[valueStart]) { valueStart += 1 }
        while valueEnd > valueStart && isWhitespace(bytes[valueEnd - 1]) { valueEnd -= 1 }
        for index in valueStart..<valueEnd where !isFieldValueChar(bytes[index]) {
            throw .malformed("control character in header value")
        }
        return (start..<colon, valueStart..<valueEnd)
    }

    static func lowercasedString(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(unsafeUninitializedCapacity: range.count) { out in
            for (offset, index) in range.enumerated() {
                out[offset] = HTTPHeaders.lowerASCII(bytes[index])
            }
            return range.count
        }
    }
}

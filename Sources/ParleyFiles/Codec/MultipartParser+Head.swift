extension MultipartParser {
    /// Parses a complete header section (every line with its CRLF, then the empty line).
    static func parseHead(_ section: [UInt8]) throws(MultipartError) -> MultipartPartHead {
        var headers: [MultipartHeader] = []
        var lineStart = 0
        // The final CRLF is the empty line that ends the section.
        let end = section.count - 2
        while lineStart < end {
            var lineEnd = lineStart
            while section[lineEnd] != UInt8(ascii: "\r") { lineEnd += 1 }
            headers.append(try parseHeaderLine(section[lineStart..<lineEnd]))
            lineStart = lineEnd + 2
        }

        let dispositions = headers.filter { $0.name.lowercased() == "content-disposition" }
        guard let disposition = dispositions.first else {
            throw .malformed("part without Content-Disposition: form-data")
        }
        guard dispositions.count == 1 else { throw .malformed("more than one Content-Disposition") }
        guard let parsed = HeaderParameters(parsing: disposition.value) else {
            throw .malformed("malformed Content-Disposition")
        }
        // RFC 7578 §4.2: the disposition type is form-data and the name parameter is required.
        guard parsed.value.lowercased() == "form-data" else {
            throw .malformed("part without Content-Disposition: form-data")
        }
        guard let name = parsed.parameter("name") else { throw .malformed("Content-Disposition without name") }
        // RFC 6266 §4.3: filename* is preferred when the recipient understands it.
        let filename =
            parsed.parameter("filename*").flatMap(ExtendedParameterValue.decode)
            ?? parsed.parameter("filename")
        let contentType = headers.first { $0.name.lowercased() == "content-type" }?.value
        return MultipartPartHead(name: name, filename: filename, contentType: contentType, headers: headers)
    }

    private static func parseHeaderLine(_ line: ArraySlice<UInt8>) throws(MultipartError) -> MultipartHeader {
        guard let first = line.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t") else {
            // Obsolete line folding (RFC 9112 §5.2): no browser sends it, and joining lines invites ambiguity.
            throw .malformed("folded part header")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw .malformed("part header without colon")
        }
        let nameBytes = line[line.startIndex..<colon]
        guard !nameBytes.isEmpty, nameBytes.allSatisfy(HeaderParameters.isTokenByte) else {
            throw .malformed("invalid part header name")
        }
        var valueBytes = line[(colon + 1)...]
        while let byte = valueBytes.first, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
            valueBytes = valueBytes.dropFirst()
        }
        while let byte = valueBytes.last, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
            valueBytes = valueBytes.dropLast()
        }
        // RFC 9110 §5.5: no control characters in a field value (HTAB aside); bytes >= 0x80 are UTF-8 names.
        guard valueBytes.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == UInt8(ascii: "\t") }) else {
            throw .malformed("control character in part header")
        }
        return MultipartHeader(
            name: String(decoding: nameBytes, as: UTF8.self), value: String(decoding: valueBytes, as: UTF8.self))
    }

    /// The boundary of a `multipart/form-data` Content-Type value (`multipart/form-data; boundary=...`, the
    /// boundary a token or a quoted string), or nil when the media type is something else or the boundary is
    /// missing or not valid per ``isValidBoundary(_:)``.
    public static func boundary(fromContentType value: String) -> String? {
        guard let parsed = HeaderParameters(parsing: value), parsed.value.lowercased() == "multipart/form-data",
            let boundary = parsed.parameter("boundary"), isValidBoundary(boundary)
        else { return nil }
        return boundary
    }

    /// RFC 2046 §5.1.1: 1 to 70 `bchars`, not ending in a space. The parser relies on it: with no CR in the
    /// boundary, a failed partial delimiter match can be released without backtracking.
    public static func isValidBoundary(_ boundary: String) -> Bool {
        let bytes = Array(boundary.utf8)
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            case UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "+"), UInt8(ascii: "_"),
                UInt8(ascii: ","), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: ":"),
                UInt8(ascii: "="), UInt8(ascii: "?"), UInt8(ascii: " "):
                true
            default:
                false
            }
        }
    }
}

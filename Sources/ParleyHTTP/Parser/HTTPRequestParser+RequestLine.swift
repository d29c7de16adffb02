/// request-line = method SP request-target SP HTTP-version (RFC 9112 §3).
extension HTTPRequestParser {
    struct RequestLine {
        var method: HTTPMethod
        /// The target when it is not `path` + `?query` (absolute-form); nil otherwise.
        var rawTarget: String?
        var path: String
        var query: String?
        var version: HTTPVersion
    }

    /// Parses `bytes[..<end]`, the request line without its CRLF. Syntax errors (400) are checked first,
    /// then the version (505), then the method (501), then the target's form, so each input has one answer.
    static func parseRequestLine(_ bytes: UnsafeBufferPointer<UInt8>, end: Int) throws(HTTPParseError) -> RequestLine {
        // Exactly one SP between the three parts (RFC 9112 §3): no leading, doubled or trailing spaces.
        var methodEnd = 0
        while methodEnd < end && bytes[methodEnd] != sp { methodEnd += 1 }
        var targetEnd = methodEnd + 1
        while targetEnd < end && bytes[targetEnd] != sp { targetEnd += 1 }
        guard targetEnd < end else { throw .malformed("request line is not method SP target SP version") }
        let methodRange = 0..<methodEnd
        let targetRange = (methodEnd + 1)..<targetEnd
        let versionRange = (targetEnd + 1)..<end

        guard !methodRange.isEmpty else { throw .malformed("empty method") }
        for index in methodRange {
            let byte = bytes[index]
            guard isTokenChar(byte) else { throw .malformed("invalid character in method") }
            // Methods are case-sensitive (RFC 9110 §9.1) and every registered one is uppercase; like nginx,
            // treat a lowercase letter as a malformed request rather than an unknown method.
            guard byte &- UInt8(ascii: "a") >= 26 else { throw .malformed("lowercase letter in method") }
        }
        guard !targetRange.isEmpty else { throw .malformed("empty request-target") }
        for index in targetRange {
            // URIs are ASCII without CTLs or spaces (RFC 3986 §2); a fragment is never sent (RFC 9112 §3.2).
            let byte = bytes[index]
            guard byte > sp && byte < 0x7f && byte != UInt8(ascii: "#") else {
                throw .malformed("invalid character in request-target")
            }
        }
        let version = try parseVersion(bytes, versionRange)
        guard let method = method(bytes, methodRange) else { throw .methodNotImplemented }
        let form = try parseTarget(bytes, targetRange, method: method)
        return RequestLine(
            method: method, rawTarget: form.rawTarget, path: form.path, query: form.query, version: version)
    }

    /// HTTP-version = "HTTP/" DIGIT "." DIGIT, case-sensitive (RFC 9112 §2.3).
    private static func parseVersion(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>
    ) throws(HTTPParseError) -> HTTPVersion {
        let digit = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard range.count == 8, matches(bytes, range.lowerBound, "HTTP/"),
            digit.contains(bytes[range.lowerBound + 5]), bytes[range.lowerBound + 6] == UInt8(ascii: "."),
            digit.contains(bytes[range.lowerBound + 7])
        else { throw .malformed("malformed HTTP version") }
        switch (bytes[range.lowerBound + 5], bytes[range.lowerBound + 7]) {
        case (UInt8(ascii: "1"), UInt8(ascii: "1")): return .http1_1
        case (UInt8(ascii: "1"), UInt8(ascii: "0")): return .http1_0
        default: throw .versionNotSupported
        }
    }

    private static func method(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> HTTPMethod? {
        let start = range.lowerBound
        switch range.count {
        case 3:
            if matches(bytes, start, "GET") { return .GET }
            if matches(bytes, start, "PUT") { return .PUT }
        case 4:
            if matches(bytes, start, "POST") { return .POST }
            if matches(bytes, start, "HEAD") { return .HEAD }
        case 5:
            if matches(bytes, start, "PATCH") { return .PATCH }
            if matches(bytes, start, "TRACE") { return .TRACE }
            if matches(bytes, start, "QUERY") { return .QUERY }
        case 6:
            if matches(bytes, start, "DELETE") { return .DELETE }
        case 7:
            if matches(bytes, start, "OPTIONS") { return .OPTIONS }
        default:
            break
        }
        return nil
    }

    /// The request-target's form (RFC 9112 §3.2): origin-form, absolute-form, or asterisk-form for OPTIONS.
    /// authority-form is only for CONNECT, which Parley does not implement.
    private static func parseTarget(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, method: HTTPMethod
    ) throws(HTTPParseError) -> (rawTarget: String?, path: String, query: String?) {
        let first = bytes[range.lowerBound]
        if first == UInt8(ascii: "/") {
            // origin-form: the target is path + ?query, so it is not kept a second time.
            guard let mark = firstIndex(of: UInt8(ascii: "?"), in: bytes, range) else {
                return (nil, string(bytes, range), nil)
            }
            return (nil, string(bytes, range.lowerBound..<mark), string(bytes, (mark + 1)..<range.upperBound))
        }
        if range.count == 1 && first == UInt8(ascii: "*") {
            // asterisk-form is only used for a server-wide OPTIONS request (RFC 9112 §3.2.4).
            guard method == .OPTIONS else { throw .malformed("asterisk-form request-target without OPTIONS") }
            return (nil, "*", nil)
        }
        let target = string(bytes, range)
        // absolute-form (RFC 9112 §3.2.2): "http://" or "https://" (scheme case-insensitive), a non-empty
        // authority, then an optional path and query.
        let authorityStart: Int
        if matchesLowercased(bytes, range, "http://") {
            authorityStart = range.lowerBound + 7
        } else if matchesLowercased(bytes, range, "https://") {
            authorityStart = range.lowerBound + 8
        } else {
            throw .malformed("invalid request-target")
        }
        var pathStart = authorityStart
        while pathStart < range.upperBound && bytes[pathStart] != UInt8(ascii: "/")
            && bytes[pathStart] != UInt8(ascii: "?")
        {
            pathStart += 1
        }
        guard pathStart > authorityStart else { throw .malformed("absolute-form request-target without authority") }
        let mark = firstIndex(of: UInt8(ascii: "?"), in: bytes, pathStart..<range.upperBound)
        let pathEnd = mark ?? range.upperBound
        let path = pathEnd > pathStart ? string(bytes, pathStart..<pathEnd) : "/"
        return (target, path, mark.map { string(bytes, ($0 + 1)..<range.upperBound) })
    }

    static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    private static func firstIndex(
        of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>
    ) -> Int? {
        var index = range.lowerBound
        while index < range.upperBound {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    /// Whether `bytes` at `start` begin with `literal` exactly (the caller ensures enough bytes remain).
    static func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { expected in
            for offset in 0..<expected.count where bytes[start + offset] != expected[offset] { return false }
            return true
        }
    }

    /// Whether `bytes[range]` begins with the lowercase `literal`, ignoring ASCII case.
    private static func matchesLowercased(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: StaticString
    ) -> Bool {
        literal.withUTF8Buffer { expected in
            guard range.count >= expected.count else { return false }
            for offset in 0..<expected.count
            where HTTPHeaders.lowerASCII(bytes[range.lowerBound + offset]) != expected[offset] {
                return false
            }
            return true
        }
    }
}

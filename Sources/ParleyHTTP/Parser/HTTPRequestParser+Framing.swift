/// Host, connection options and message body framing, decided once per head (RFC 9112 §3.2, §6, §9.3).
extension HTTPRequestParser {
    static func makeHead(_ line: RequestLine, headers: HTTPHeaders) throws(HTTPParseError) -> HTTPRequestHead {
        var hostCount = 0
        var contentLength: Int?
        var transferCoding = TransferCodingList()
        var connectionClose = false
        var connectionKeepAlive = false
        var connectionUpgrade = false
        var hasUpgrade = false
        var expectContinue = false
        for (name, value) in headers {
            switch name {
            case "host":
                hostCount += 1
            case "content-length":
                let length = try parseContentLength(value)
                // Repeated or list-valued Content-Length is accepted only if every value agrees (RFC 9110 §8.6).
                if let contentLength, contentLength != length {
                    throw .malformed("conflicting Content-Length values")
                }
                contentLength = length
            case "transfer-encoding":
                transferCoding.add(value)
            case "connection":
                forEachListElement(value) { element in
                    if equalsLowercased(element, "close") { connectionClose = true }
                    if equalsLowercased(element, "keep-alive") { connectionKeepAlive = true }
                    if equalsLowercased(element, "upgrade") { connectionUpgrade = true }
                }
            case "upgrade":
                hasUpgrade = true
            case "expect":
                var value = value
                if value.withUTF8({ equalsLowercased($0, "100-continue") }) { expectContinue = true }
            default:
                break
            }
        }

        // Exactly one Host in HTTP/1.1; more than one in any version (RFC 9112 §3.2).
        if hostCount > 1 { throw .malformed("more than one Host header") }
        if hostCount == 0 && line.version == .http1_1 { throw .malformed("missing Host header") }

        let framing: HTTPBodyFraming
        if transferCoding.isPresent {
            // Both headers at once is the classic request smuggling vector (RFC 9112 §6.1, §11.2).
            if contentLength != nil { throw .malformed("conflicting Content-Length and Transfer-Encoding") }
            // An HTTP/1.0 message with Transfer-Encoding has faulty framing (RFC 9112 §6.1).
            if line.version == .http1_0 { throw .malformed("Transfer-Encoding in HTTP/1.0 request") }
            try transferCoding.validate()
            framing = .chunked
        } else if let contentLength {
            framing = .contentLength(contentLength)
        } else {
            // A request without either has no body (RFC 9112 §6.3, rule 7).
            framing = .none
        }

        let keepAlive: Bool
        switch line.version {
        case .http1_1: keepAlive = !connectionClose
        case .http1_0: keepAlive = connectionKeepAlive && !connectionClose
        }
        return HTTPRequestHead(
            method: line.method,
            rawTarget: line.rawTarget,
            path: line.path,
            query: line.query,
            version: line.version,
            headers: headers,
            keepAlive: keepAlive,
            expectContinue: expectContinue && line.version == .http1_1,
            framing: framing,
            isUpgrade: connectionUpgrade && hasUpgrade)
    }

    /// Content-Length = 1*DIGIT (RFC 9110 §8.6); a comma list of identical values is that value.
    /// No sign, no inner whitespace, no hex, no overflow.
    static func parseContentLength(_ value: String) throws(HTTPParseError) -> Int {
        var value = value
        var result: Int?
        var failure: HTTPParseError?
        value.withUTF8 { bytes in
            forEachListElement(bytes) { element in
                guard failure == nil else { return }
                guard let length = parseDigits(element) else {
                    failure = .malformed("invalid Content-Length")
                    return
                }
                if let result, result != length {
                    failure = .malformed("conflicting Content-Length values")
                    return
                }
                result = length
            }
        }
        if let failure { throw failure }
        guard let result else { throw .malformed("invalid Content-Length") }
        return result
    }

    private static func parseDigits(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !bytes.isEmpty else { return nil }
        var result = 0
        for byte in bytes {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(Int(digit))
            guard !overflow1 && !overflow2 else { return nil }
            result = sum
        }
        return result
    }

    /// Calls `body` with every element of a comma-separated list, OWS trimmed, including empty elements.
    static func forEachListElement(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: ",") { end += 1 }
            var lo = start
            var hi = end
            while lo < hi && isWhitespace(bytes[lo]) { lo += 1 }
            while hi > lo && isWhitespace(bytes[hi - 1]) { hi -= 1 }
            body(UnsafeBufferPointer(rebasing: bytes[lo..<hi]))
            start = end + 1
        }
    }

    static func forEachListElement(_ value: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var value = value
        value.withUTF8 { forEachListElement($0, body) }
    }

    /// ASCII case-insensitive comparison with a lowercase literal.
    static func equalsLowercased(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { expected in
            guard bytes.count == expected.count else { return false }
            for index in 0..<expected.count where HTTPHeaders.lowerASCII(bytes[index]) != expected[index] {
                return false
            }
            return true
        }
    }
}

extension HTTPRequestParser {
    /// The codings of every Transfer-Encoding line, in order (RFC 9112 §6.1).
    struct TransferCodingList {
        private(set) var isPresent = false
        private var codingCount = 0
        private var chunkedCount = 0
        private var lastIsChunked = false

        mutating func add(_ value: String) {
            isPresent = true
            HTTPRequestParser.forEachListElement(value) { element in
                // Empty list elements are ignored (RFC 9110 §5.6.1).
                guard !element.isEmpty else { return }
                codingCount += 1
                lastIsChunked = HTTPRequestParser.equalsLowercased(element, "chunked")
                if lastIsChunked { chunkedCount += 1 }
            }
        }

        /// Accepts exactly one `chunked`, which must be the final coding (RFC 9112 §6.3, rule 4).
        func validate() throws(HTTPParseError) {
            if codingCount == 0 { throw .malformed("empty Transfer-Encoding") }
            if chunkedCount > 1 { throw .malformed("chunked applied more than once") }
            if chunkedCount == 1 && !lastIsChunked { throw .malformed("chunked is not the final transfer coding") }
            // Only unknown codings, or unknown codings under chunked: understood framing, unsupported content.
            if codingCount > 1 || chunkedCount == 0 { throw .transferCodingNotImplemented }
        }
    }
}

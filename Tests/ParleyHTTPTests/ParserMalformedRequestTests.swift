import ParleyHTTP
import Testing

/// One malformed input and the status it must fail with, whichever way it is split.
struct MalformedCase: Sendable, CustomTestStringConvertible {
    var name: String
    var input: [UInt8]
    var status: Int
    /// The reason, pinned so a case cannot pass by failing for some other cause.
    var reason: String

    init(_ name: String, _ text: String, _ status: Int, _ reason: String) {
        self.name = name
        self.input = bytes(text)
        self.status = status
        self.reason = reason
    }

    var testDescription: String { "\(name) -> \(status)" }
}

private let host = "Host: h\r\n"

let malformedCorpus: [MalformedCase] = [
    // Request line (RFC 9112 §3).
    .init("unknown method", "BREW /pot HTTP/1.1\r\n\(host)\r\n", 501, "method not implemented"),
    .init("CONNECT is not implemented", "CONNECT h:443 HTTP/1.1\r\n\(host)\r\n", 501, "method not implemented"),
    .init("lowercase method", "get / HTTP/1.1\r\n\(host)\r\n", 400, "lowercase letter in method"),
    .init("mixed-case method", "Get / HTTP/1.1\r\n\(host)\r\n", 400, "lowercase letter in method"),
    .init("method with invalid character", "GE@T / HTTP/1.1\r\n\(host)\r\n", 400, "invalid character in method"),
    .init("method with UTF-8", "GÉT / HTTP/1.1\r\n\(host)\r\n", 400, "invalid character in method"),
    .init("leading space", " GET / HTTP/1.1\r\n\(host)\r\n", 400, "empty method"),
    .init("double space after method", "GET  / HTTP/1.1\r\n\(host)\r\n", 400, "empty request-target"),
    .init("double space before version", "GET /  HTTP/1.1\r\n\(host)\r\n", 400, "malformed HTTP version"),
    .init("trailing space after version", "GET / HTTP/1.1 \r\n\(host)\r\n", 400, "malformed HTTP version"),
    .init("tab as separator", "GET\t/ HTTP/1.1\r\n\(host)\r\n", 400, "request line is not method SP target SP version"),
    .init("missing version", "GET /\r\n\(host)\r\n", 400, "request line is not method SP target SP version"),
    .init("only a method", "GET\r\n\(host)\r\n", 400, "request line is not method SP target SP version"),
    .init("HTTP/2.0", "GET / HTTP/2.0\r\n\(host)\r\n", 505, "HTTP version not supported"),
    .init("HTTP/0.9 style version", "GET / HTTP/0.9\r\n\(host)\r\n", 505, "HTTP version not supported"),
    .init("HTTP/1.2", "GET / HTTP/1.2\r\n\(host)\r\n", 505, "HTTP version not supported"),
    .init("HTTP/1.x", "GET / HTTP/1.x\r\n\(host)\r\n", 400, "malformed HTTP version"),
    .init("HTTP/1.10", "GET / HTTP/1.10\r\n\(host)\r\n", 400, "malformed HTTP version"),
    .init("lowercase http", "GET / http/1.1\r\n\(host)\r\n", 400, "malformed HTTP version"),
    .init("HTTP/11", "GET / HTTP/11\r\n\(host)\r\n", 400, "malformed HTTP version"),
    .init("garbage version", "GET / HTTPS/1.1\r\n\(host)\r\n", 400, "malformed HTTP version"),
    .init("relative target", "GET index.html HTTP/1.1\r\n\(host)\r\n", 400, "invalid request-target"),
    .init(
        "asterisk-form with GET", "GET * HTTP/1.1\r\n\(host)\r\n", 400, "asterisk-form request-target without OPTIONS"),
    .init("authority-form", "GET example.com:80 HTTP/1.1\r\n\(host)\r\n", 400, "invalid request-target"),
    .init(
        "absolute-form without authority", "GET http:///p HTTP/1.1\r\n\(host)\r\n", 400,
        "absolute-form request-target without authority"),
    .init("unsupported scheme", "GET ftp://h/p HTTP/1.1\r\n\(host)\r\n", 400, "invalid request-target"),
    .init("fragment in target", "GET /p#frag HTTP/1.1\r\n\(host)\r\n", 400, "invalid character in request-target"),
    .init(
        "control character in target", "GET /a\u{7F}b HTTP/1.1\r\n\(host)\r\n", 400,
        "invalid character in request-target"),
    .init("UTF-8 in target", "GET /café HTTP/1.1\r\n\(host)\r\n", 400, "invalid character in request-target"),
    .init("NUL in target", "GET /a\u{0}b HTTP/1.1\r\n\(host)\r\n", 400, "invalid character in request-target"),

    // Line endings (RFC 9112 §2.2).
    .init("bare LF ends request line", "GET / HTTP/1.1\n\(host)\r\n", 400, "bare LF in line"),
    .init("bare LF ends header", "GET / HTTP/1.1\r\nHost: h\n\r\n", 400, "bare LF in line"),
    .init("LF-only request", "GET / HTTP/1.1\nHost: h\n\n", 400, "bare LF in line"),
    .init("bare LF before request line", "\nGET / HTTP/1.1\r\n\(host)\r\n", 400, "bare LF in line"),
    .init("bare CR in header value", "GET / HTTP/1.1\r\n\(host)X-A: a\rb\r\n\r\n", 400, "bare CR in line"),
    .init("bare CR ends header section", "GET / HTTP/1.1\r\n\(host)\r\r\n", 400, "bare CR in line"),
    .init("bare CR before request line", "\rGET / HTTP/1.1\r\n\(host)\r\n", 400, "bare CR in line"),

    // Header fields (RFC 9112 §5, RFC 9110 §5.5).
    .init("missing Host on HTTP/1.1", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", 400, "missing Host header"),
    .init("duplicate Host", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "more than one Host header"),
    .init(
        "duplicate Host on HTTP/1.0", "GET / HTTP/1.0\r\nHost: a\r\nhost: a\r\n\r\n", 400, "more than one Host header"),
    .init("obs-fold", "GET / HTTP/1.1\r\n\(host)X-A: one\r\n two\r\n\r\n", 400, "obsolete line folding in header"),
    .init(
        "obs-fold with tab", "GET / HTTP/1.1\r\n\(host)X-A: one\r\n\ttwo\r\n\r\n", 400,
        "obsolete line folding in header"),
    .init("whitespace before first header", "GET / HTTP/1.1\r\n \(host)\r\n", 400, "obsolete line folding in header"),
    .init("space before colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400, "whitespace before colon in header"),
    .init("tab before colon", "GET / HTTP/1.1\r\n\(host)X-A\t: 1\r\n\r\n", 400, "whitespace before colon in header"),
    .init("empty header name", "GET / HTTP/1.1\r\n\(host): value\r\n\r\n", 400, "empty header name"),
    .init("header without colon", "GET / HTTP/1.1\r\n\(host)NoColon\r\n\r\n", 400, "header line without colon"),
    .init(
        "invalid header name character", "GET / HTTP/1.1\r\n\(host)X(A): 1\r\n\r\n", 400,
        "invalid character in header name"),
    .init(
        "NUL in header value", "GET / HTTP/1.1\r\n\(host)X-A: a\u{0}b\r\n\r\n", 400, "control character in header value"
    ),
    .init(
        "escape in header value", "GET / HTTP/1.1\r\n\(host)X-A: \u{1B}[31m\r\n\r\n", 400,
        "control character in header value"),
    .init(
        "DEL in header value", "GET / HTTP/1.1\r\n\(host)X-A: a\u{7F}\r\n\r\n", 400, "control character in header value"
    ),

    // Framing (RFC 9112 §6).
    .init(
        "Content-Length with Transfer-Encoding",
        "POST / HTTP/1.1\r\n\(host)Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400,
        "conflicting Content-Length and Transfer-Encoding"),
    .init(
        "Transfer-Encoding with Content-Length",
        "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n0\r\n\r\n", 400,
        "conflicting Content-Length and Transfer-Encoding"),
    .init(
        "Transfer-Encoding in HTTP/1.0",
        "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "Transfer-Encoding in HTTP/1.0 request"),
    .init(
        "Transfer-Encoding gzip", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: gzip\r\n\r\n", 501,
        "transfer coding not implemented"),
    .init(
        "Transfer-Encoding gzip, chunked",
        "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: gzip, chunked\r\n\r\n", 501, "transfer coding not implemented"),
    .init(
        "Transfer-Encoding chunked, chunked",
        "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked, chunked\r\n\r\n", 400, "chunked applied more than once"),
    .init(
        "Transfer-Encoding chunked twice",
        "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400,
        "chunked applied more than once"),
    .init(
        "chunked not last", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked, gzip\r\n\r\n", 400,
        "chunked is not the final transfer coding"),
    .init(
        "empty Transfer-Encoding", "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: \r\n\r\n", 400,
        "empty Transfer-Encoding"),
    .init(
        "Transfer-Encoding with parameter",
        "POST / HTTP/1.1\r\n\(host)Transfer-Encoding: chunked;q=1\r\n\r\n", 501, "transfer coding not implemented"),
    .init(
        "Content-Length +5", "POST / HTTP/1.1\r\n\(host)Content-Length: +5\r\n\r\nhello", 400, "invalid Content-Length"),
    .init("Content-Length -1", "POST / HTTP/1.1\r\n\(host)Content-Length: -1\r\n\r\n", 400, "invalid Content-Length"),
    .init("Content-Length 1e3", "POST / HTTP/1.1\r\n\(host)Content-Length: 1e3\r\n\r\n", 400, "invalid Content-Length"),
    .init(
        "Content-Length 0x10", "POST / HTTP/1.1\r\n\(host)Content-Length: 0x10\r\n\r\n", 400, "invalid Content-Length"),
    .init(
        "Content-Length with inner space", "POST / HTTP/1.1\r\n\(host)Content-Length: 1 0\r\n\r\n", 400,
        "invalid Content-Length"),
    .init("empty Content-Length", "POST / HTTP/1.1\r\n\(host)Content-Length:\r\n\r\n", 400, "invalid Content-Length"),
    .init(
        "Content-Length overflowing Int",
        "POST / HTTP/1.1\r\n\(host)Content-Length: 99999999999999999999999\r\n\r\n", 400, "invalid Content-Length"),
    .init(
        "Content-Length just over Int.max",
        "POST / HTTP/1.1\r\n\(host)Content-Length: 9223372036854775808\r\n\r\n", 400, "invalid Content-Length"),
    .init(
        "two different Content-Lengths",
        "POST / HTTP/1.1\r\n\(host)Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400,
        "conflicting Content-Length values"),
    .init(
        "Content-Length list with different values",
        "POST / HTTP/1.1\r\n\(host)Content-Length: 3, 4\r\n\r\nabcd", 400, "conflicting Content-Length values"),
    .init(
        "Content-Length list with empty element",
        "POST / HTTP/1.1\r\n\(host)Content-Length: 3,\r\n\r\nabc", 400, "invalid Content-Length"),

    // Chunked coding (RFC 9112 §7.1).
    .init("non-hex chunk size", chunked("g\r\nx\r\n0\r\n\r\n"), 400, "invalid chunk size"),
    .init("missing chunk size", chunked("\r\nx\r\n0\r\n\r\n"), 400, "invalid chunk size"),
    .init("negative chunk size", chunked("-1\r\nx\r\n0\r\n\r\n"), 400, "invalid chunk size"),
    .init("0x-prefixed chunk size", chunked("0x1\r\nx\r\n0\r\n\r\n"), 400, "invalid chunk size"),
    .init("space before chunk size", chunked(" 1\r\nx\r\n0\r\n\r\n"), 400, "invalid chunk size"),
    .init("whitespace after chunk size", chunked("1 \r\nx\r\n0\r\n\r\n"), 400, "invalid chunk size"),
    .init("overflowing chunk size", chunked("8000000000000000\r\nx\r\n0\r\n\r\n"), 400, "chunk size too large"),
    .init("too many chunk size digits", chunked("fffffffffffffffffffff\r\n"), 400, "chunk size too large"),
    .init("chunk extension without name", chunked("1;\r\nx\r\n0\r\n\r\n"), 400, "invalid chunk extension"),
    .init("chunk extension with empty value", chunked("1;a=\r\nx\r\n0\r\n\r\n"), 400, "invalid chunk extension"),
    .init("unterminated quoted chunk extension", chunked("1;a=\"x\r\nx\r\n0\r\n\r\n"), 400, "invalid chunk extension"),
    .init(
        "oversized chunk extensions",
        chunked("1;" + String(repeating: "a", count: 5000) + "\r\nx\r\n0\r\n\r\n"), 400, "chunk-size line too long"),
    .init("missing CRLF after chunk data", chunked("3\r\nabcX\r\n0\r\n\r\n"), 400, "missing CRLF after chunk data"),
    .init("chunk data longer than its size", chunked("3\r\nabcd\r\n0\r\n\r\n"), 400, "missing CRLF after chunk data"),
    .init("LF-only after chunk data", chunked("3\r\nabc\n0\r\n\r\n"), 400, "missing CRLF after chunk data"),
    .init("bare LF after chunk size", chunked("3\nabc\r\n0\r\n\r\n"), 400, "bare LF in line"),
    .init("obs-fold in trailer", chunked("0\r\nX-T: a\r\n b\r\n\r\n"), 400, "obsolete line folding in header"),
    .init("invalid trailer name", chunked("0\r\nX T: a\r\n\r\n"), 400, "whitespace before colon in header"),
    .init("control character in trailer", chunked("0\r\nX-T: \u{1}\r\n\r\n"), 400, "control character in header value"),
]

private func chunked(_ body: String) -> String {
    "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + body
}

@Suite struct ParserMalformedRequestTests {
    @Test(arguments: malformedCorpus)
    func rejectsMalformedRequest(_ malformed: MalformedCase) {
        let outcome = parseUnderEverySplit(malformed.input)
        #expect(outcome.error == HTTPParseError(status: malformed.status, reason: malformed.reason), "\(outcome)")
    }

    @Test func rejectsInvalidBytesInValuesButAllowsObsText() {
        let raw = bytes("GET / HTTP/1.1\r\nHost: h\r\nX-Latin1: caf") + [0xE9, 0xFF] + bytes("\r\n\r\n")
        let outcome = parseUnderEverySplit(raw)
        #expect(outcome.error == nil)
        // Not valid UTF-8, so the String holds replacement characters; the request is still accepted.
        #expect(outcome.heads.first?.headers["x-latin1"] == "caf\u{FFFD}\u{FFFD}")
    }

    @Test func refusesSmugglingAttemptWithContentLengthAndTransferEncoding() {
        // A front end honouring Content-Length would forward the second request as body; one honouring
        // Transfer-Encoding would see it as a new request. Refuse both interpretations (RFC 9112 §6.1, §11.2).
        let outcome = parseUnderEverySplit(
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 44\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "0\r\n\r\nGET /admin HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(outcome.error?.status == 400)
        #expect(outcome.events.isEmpty)
    }

    @Test func refusesSmugglingAttemptWithObfuscatedTransferEncoding() {
        for value in ["chunked, identity", "xchunked", "chunked ,chunked", "identity"] {
            let status = failureStatus(
                "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \(value)\r\n\r\n0\r\n\r\n")
            #expect(status == 400 || status == 501, "Transfer-Encoding: \(value)")
        }
        // A space before the colon would make a lenient parser see a different header name.
        #expect(failureStatus("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n") == 400)
    }

    @Test func refusesSmugglingAttemptWithBareLineFeeds() {
        // A lenient parser would see two requests where a strict one sees one header value (RFC 9112 §2.2).
        let outcome = parseUnderEverySplit(
            "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\nContent-Length: 5\r\n\r\nhello")
        #expect(outcome.error?.status == 400)
    }

    @Test func refusesSmugglingAttemptWithConflictingContentLengths() {
        #expect(failureStatus("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nContent-Length: 30\r\n\r\n") == 400)
    }

    @Test func rejectsTransferEncodingInHTTP10() {
        #expect(failureStatus("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") == 400)
    }

    @Test func requiresExactlyOneHostInHTTP11() {
        #expect(failureStatus("GET / HTTP/1.1\r\n\r\n") == 400)
        #expect(failureStatus("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n") == 400)
        #expect(failureStatus("GET / HTTP/1.0\r\n\r\n") == nil)
    }

    @Test func emitsEarlierPipelinedRequestsBeforeTheFailure() {
        let outcome = parseUnderEverySplit(
            "GET /ok HTTP/1.1\r\nHost: h\r\n\r\nGET /bad HTTP/1.1\r\nHost : h\r\n\r\n")
        #expect(outcome.heads.map(\.path) == ["/ok"])
        #expect(outcome.events.last == .end)
        #expect(outcome.error?.status == 400)
    }

    @Test func emitsChunksBeforeTheFailure() {
        let outcome = parseUnderEverySplit(chunked("3\r\nabc\r\nzz\r\n"))
        #expect(outcome.bodies == [bytes("abc")])
        #expect(outcome.error?.status == 400)
    }

    /// Every byte value as a method, header-name and header-value character: accepted exactly when the
    /// RFC's grammar allows it.
    @Test func classifiesEveryByte() {
        let tchars = Set(bytes("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
        for byte in UInt8.min...UInt8.max {
            var parser = HTTPRequestParser()
            parser.append(contentsOf: bytes("GET / HTTP/1.1\r\nHost: h\r\nX") + [byte] + bytes("Y: v\r\n\r\n"))
            let nameAccepted = (try? parser.next()) != nil
            let lineEnding = byte == 0x0A || byte == 0x0D
            // "X:Y: v" is the header "X" with the value "Y: v".
            #expect(nameAccepted == (tchars.contains(byte) || byte == UInt8(ascii: ":")), "header name byte \(byte)")

            parser = HTTPRequestParser()
            parser.append(contentsOf: bytes("GET / HTTP/1.1\r\nHost: h\r\nX: a") + [byte] + bytes("b\r\n\r\n"))
            let valueAccepted = (try? parser.next()) != nil
            let valueAllowed = (byte >= 0x20 && byte != 0x7F) || byte == 0x09
            #expect(valueAccepted == valueAllowed, "header value byte \(byte)")

            parser = HTTPRequestParser()
            parser.append(contentsOf: [UInt8(ascii: "X"), byte] + bytes(" / HTTP/1.1\r\nHost: h\r\n\r\n"))
            var methodStatus: Int?
            do { _ = try parser.next() } catch { methodStatus = error.status }
            let expected: Int
            if lineEnding {
                expected = 400
            } else if byte == 0x20 {
                expected = 400 // "X  / HTTP/1.1": empty target
            } else if tchars.contains(byte) && !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) {
                expected = 501
            } else {
                expected = 400
            }
            #expect(methodStatus == expected, "method byte \(byte)")
        }
    }
}

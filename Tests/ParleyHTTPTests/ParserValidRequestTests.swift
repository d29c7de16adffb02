import ParleyHTTP
import Testing

/// Valid requests: each is parsed whole, one byte at a time, split at every boundary and at random splits,
/// and every feeding must produce the same events.
@Suite struct ParserValidRequestTests {
    @Test func parsesSimpleGet() throws {
        let outcome = try parseValid("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
        let expected = HTTPRequestHead(
            method: .GET, target: "/", path: "/", query: nil, version: .http1_1,
            headers: ["host": "example.com"], keepAlive: true, expectContinue: false, framing: .none,
            isUpgrade: false)
        #expect(outcome.events == [.head(expected), .end])
    }

    @Test func splitsPathAndRawQuery() throws {
        let outcome = try parseValid("GET /search/a%20b?q=swift+nio&x=%41&empty= HTTP/1.1\r\nHost: h\r\n\r\n")
        let head = try #require(outcome.heads.first)
        #expect(head.target == "/search/a%20b?q=swift+nio&x=%41&empty=")
        #expect(head.path == "/search/a%20b")
        #expect(head.query == "q=swift+nio&x=%41&empty=")
    }

    @Test func distinguishesEmptyQueryFromNoQuery() throws {
        let withMark = try parseValid("GET /p? HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(withMark.heads.first?.path == "/p")
        #expect(withMark.heads.first?.query == "")
        let withoutMark = try parseValid("GET /p HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(withoutMark.heads.first?.query == nil)
        let secondMark = try parseValid("GET /p?a?b HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(secondMark.heads.first?.query == "a?b")
    }

    @Test func keepsRepeatedHeadersInOrder() throws {
        let outcome = try parseValid(
            "GET / HTTP/1.1\r\nHost: h\r\nAccept: text/html\r\nX-A: 1\r\nAccept: application/json\r\n\r\n")
        let head = try #require(outcome.heads.first)
        #expect(head.headers.values(for: "accept") == ["text/html", "application/json"])
        #expect(head.headers["Accept"] == "text/html")
        #expect(head.headers.map(\.name) == ["host", "accept", "x-a", "accept"])
        #expect(head.headers.count == 4)
    }

    @Test func lowercasesMixedCaseHeaderNames() throws {
        let outcome = try parseValid(
            "GET / HTTP/1.1\r\nHOST: h\r\nContent-TYPE: text/plain\r\nx-CuStOm-HeAdEr: Value Keeps Case\r\n\r\n")
        let head = try #require(outcome.heads.first)
        #expect(head.headers.map(\.name) == ["host", "content-type", "x-custom-header"])
        #expect(head.headers["X-Custom-Header"] == "Value Keeps Case")
        #expect(head.headers["content-type"] == "text/plain")
    }

    @Test func trimsOptionalWhitespaceAroundValues() throws {
        let outcome = try parseValid(
            "GET / HTTP/1.1\r\nHost:h\r\nX-Tabs:\t \tinner  space\t \r\nX-Empty:\r\nX-Blank:   \r\n\r\n")
        let head = try #require(outcome.heads.first)
        #expect(head.headers["host"] == "h")
        #expect(head.headers["x-tabs"] == "inner  space")
        #expect(head.headers["x-empty"] == "")
        #expect(head.headers["x-blank"] == "")
    }

    @Test func http10DefaultsToClose() throws {
        let outcome = try parseValid("GET /old HTTP/1.0\r\n\r\n")
        let head = try #require(outcome.heads.first)
        #expect(head.version == .http1_0)
        #expect(head.keepAlive == false)
        #expect(head.framing == .none)
        #expect(outcome.events.count == 2)
    }

    @Test func http10KeepsAliveOnRequest() throws {
        let outcome = try parseValid("GET / HTTP/1.0\r\nHost: h\r\nConnection: Keep-Alive\r\n\r\n")
        #expect(outcome.heads.first?.keepAlive == true)
    }

    @Test func http11ClosesOnConnectionClose() throws {
        let outcome = try parseValid("GET / HTTP/1.1\r\nHost: h\r\nConnection: foo, CLOSE\r\n\r\n")
        #expect(outcome.heads.first?.keepAlive == false)
        let keep = try parseValid("GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\n\r\n")
        #expect(keep.heads.first?.keepAlive == true)
    }

    @Test func postWithContentLength() throws {
        let outcome = try parseValid(
            "POST /api/messages HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n"
                + "{\"text\":\"hi\"}")
        let head = try #require(outcome.heads.first)
        #expect(head.method == .POST)
        #expect(head.framing == .contentLength(13))
        #expect(outcome.events.dropFirst() == [.body(bytes("{\"text\":\"hi\"}")), .end])
    }

    @Test func contentLengthZeroHasNoBodyEvent() throws {
        let outcome = try parseValid("PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
        #expect(outcome.heads.first?.framing == .contentLength(0))
        #expect(outcome.events.count == 2)
        #expect(outcome.events.last == .end)
    }

    @Test func acceptsRepeatedIdenticalContentLengths() throws {
        let outcome = try parseValid(
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3, 003\r\n\r\nabc")
        #expect(outcome.heads.first?.framing == .contentLength(3))
        #expect(outcome.bodies == [bytes("abc")])
    }

    @Test func dechunksBodyWithExtensionsAndTrailers() throws {
        let outcome = try parseValid(
            "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;name=value\r\nhello\r\n"
                + "7 ; a ; quoted=\"x;y \\\" z\"\r\n, world\r\n"
                + "A\r\n0123456789\r\n"
                + "0;last\r\nX-Checksum: abc\r\nX-Other:  1 \r\n\r\n")
        let head = try #require(outcome.heads.first)
        #expect(head.framing == .chunked)
        #expect(outcome.bodies == [bytes("hello, world0123456789")])
        #expect(outcome.events.last == .end)
        // Trailers are validated and discarded, never merged into the head.
        #expect(!head.headers.contains(name: "x-checksum"))
    }

    @Test func chunkedWithoutTrailersAndUppercaseHex() throws {
        let body = String(repeating: "z", count: 0x1F)
        let outcome = try parseValid(
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n001F\r\n\(body)\r\n0\r\n\r\n")
        #expect(outcome.bodies == [bytes(body)])
        #expect(outcome.endCount == 1)
    }

    @Test func emptyChunkedBody() throws {
        let outcome = try parseValid("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        #expect(outcome.events.count == 2)
    }

    @Test func flagsExpectContinue() throws {
        let outcome = try parseValid(
            "PUT /big HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\nok")
        #expect(outcome.heads.first?.expectContinue == true)
        // Only meaningful for HTTP/1.1 (RFC 9110 §10.1.1).
        let old = try parseValid("PUT /big HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok")
        #expect(old.heads.first?.expectContinue == false)
        let plain = try parseValid("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(plain.heads.first?.expectContinue == false)
    }

    @Test func extractsPathFromAbsoluteForm() throws {
        let outcome = try parseValid("GET http://example.com:8080/a/b?c=d HTTP/1.1\r\nHost: example.com\r\n\r\n")
        let head = try #require(outcome.heads.first)
        #expect(head.target == "http://example.com:8080/a/b?c=d")
        #expect(head.path == "/a/b")
        #expect(head.query == "c=d")

        let bare = try parseValid("GET HTTPS://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n")
        #expect(bare.heads.first?.path == "/")
        #expect(bare.heads.first?.query == nil)

        let queryOnly = try parseValid("GET http://h?x HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(queryOnly.heads.first?.path == "/")
        #expect(queryOnly.heads.first?.query == "x")
    }

    @Test func acceptsAsteriskFormForOptions() throws {
        let outcome = try parseValid("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n")
        let head = try #require(outcome.heads.first)
        #expect(head.method == .OPTIONS)
        #expect(head.path == "*")
        #expect(head.target == "*")
        #expect(head.query == nil)
    }

    @Test func recognisesUpgradeRequest() throws {
        let outcome = try parseValid(
            "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        let head = try #require(outcome.heads.first)
        #expect(head.isUpgrade)
        #expect(head.headers.containsToken("upgrade", in: "Connection"))
        #expect(head.headers["sec-websocket-key"] == "dGhlIHNhbXBsZSBub25jZQ==")

        // Either half alone is not an upgrade.
        let noConnection = try parseValid("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n\r\n")
        #expect(noConnection.heads.first?.isUpgrade == false)
        let noUpgrade = try parseValid("GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\n\r\n")
        #expect(noUpgrade.heads.first?.isUpgrade == false)
    }

    @Test func ignoresEmptyLinesBeforeRequestLine() throws {
        let outcome = try parseValid("\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(outcome.heads.count == 1)
        #expect(outcome.endCount == 1)
    }

    @Test func keepsUTF8InHeaderValues() throws {
        let outcome = try parseValid("GET / HTTP/1.1\r\nHost: h\r\nX-Name: Zoë 🎉 日本\r\n\r\n")
        #expect(outcome.heads.first?.headers["x-name"] == "Zoë 🎉 日本")
    }

    @Test func parsesEveryImplementedMethod() throws {
        for method in HTTPMethod.allCases {
            let target = method == .OPTIONS ? "*" : "/m"
            let outcome = try parseValid("\(method.rawValue) \(target) HTTP/1.1\r\nHost: h\r\n\r\n")
            #expect(outcome.heads.first?.method == method)
        }
    }

    @Test func parsesPipelinedRequestsInOrder() throws {
        let outcome = try parseValid(
            "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"
                + "POST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nbody"
                + "POST /3 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"
                + "\r\nDELETE /4 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        #expect(outcome.heads.map(\.path) == ["/1", "/2", "/3", "/4"])
        #expect(outcome.bodies == [bytes("body"), bytes("ab")])
        #expect(outcome.endCount == 4)
        #expect(
            outcome.events.map(\.kind) == ["head", "end", "head", "body", "end", "head", "body", "end", "head", "end"])
        #expect(outcome.heads.last?.keepAlive == false)
    }
}

extension HTTPParserEvent {
    var kind: String {
        switch self {
        case .head: "head"
        case .body: "body"
        case .end: "end"
        }
    }
}

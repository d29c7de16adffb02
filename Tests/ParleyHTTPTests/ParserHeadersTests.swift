import ParleyHTTP
import Testing

@Suite struct ParserHeadersTests {
    @Test func addsAndLooksUpCaseInsensitively() {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain")
        headers.add(name: "SET-COOKIE", value: "a=1")
        headers.add(name: "set-cookie", value: "b=2")
        #expect(headers.count == 3)
        #expect(headers["content-type"] == "text/plain")
        #expect(headers["CONTENT-TYPE"] == "text/plain")
        #expect(headers["Set-Cookie"] == "a=1")
        #expect(headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        #expect(headers.contains(name: "content-TYPE"))
        #expect(!headers.contains(name: "content-length"))
        #expect(headers["missing"] == nil)
        #expect(headers.map(\.name) == ["content-type", "set-cookie", "set-cookie"])
    }

    @Test func replaceOrAddKeepsPositionAndDropsDuplicates() {
        var headers: HTTPHeaders = ["A": "1", "B": "2", "a": "3"]
        headers.replaceOrAdd(name: "a", value: "x")
        #expect(headers.map(\.name) == ["a", "b"])
        #expect(headers.values(for: "A") == ["x"])
        headers.replaceOrAdd(name: "C", value: "y")
        #expect(headers.map(\.value) == ["x", "2", "y"])
    }

    @Test func removesEveryLineWithTheName() {
        var headers: HTTPHeaders = ["Vary": "a", "Host": "h", "vary": "b"]
        headers.remove(name: "VARY")
        #expect(headers.count == 1)
        #expect(headers["host"] == "h")
        headers.remove(name: "absent")
        #expect(headers.count == 1)
    }

    @Test func findsTokensInCommaLists() {
        let headers: HTTPHeaders = ["Connection": "keep-alive,  Upgrade ", "connection": "\tTE", "X": "close"]
        #expect(headers.containsToken("upgrade", in: "connection"))
        #expect(headers.containsToken("KEEP-ALIVE", in: "Connection"))
        #expect(headers.containsToken("te", in: "connection"))
        #expect(!headers.containsToken("close", in: "connection"))
        #expect(!headers.containsToken("upgrad", in: "connection"))
        #expect(!headers.containsToken("keep-alive, upgrade", in: "connection"))
        #expect(headers.containsToken("close", in: "x"))
        let empty: HTTPHeaders = ["Connection": ""]
        #expect(!empty.containsToken("close", in: "connection"))
    }

    @Test func comparesByNameValueAndOrder() {
        let a: HTTPHeaders = ["A": "1", "B": "2"]
        let b: HTTPHeaders = ["a": "1", "b": "2"]
        let c: HTTPHeaders = ["b": "2", "a": "1"]
        #expect(a == b)
        #expect(a != c)
        #expect(HTTPHeaders() == [:])
    }

    @Test func keepsNonASCIINamesAsGiven() {
        var headers = HTTPHeaders()
        headers.add(name: "X-Ünïcode", value: "v")
        #expect(headers["x-Ünïcode"] == "v")
        #expect(headers.map(\.name) == ["x-Ünïcode"])
    }
}

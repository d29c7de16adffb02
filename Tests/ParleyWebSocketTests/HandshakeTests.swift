import ParleyHTTP
import Testing

@testable import ParleyWebSocket

private func head(
    method: HTTPMethod = .GET, version: HTTPVersion = .http1_1,
    _ fields: [(String, String)]? = nil
) -> HTTPRequestHead {
    var headers = HTTPHeaders()
    for (name, value) in fields ?? validFields { headers.add(name: name, value: value) }
    return HTTPRequestHead(method: method, target: "/ws", path: "/ws", version: version, headers: headers)
}

private let validFields: [(String, String)] = [
    ("Host", "example.com"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
]

private func without(_ name: String) -> [(String, String)] { validFields.filter { $0.0 != name } }
private func replacing(_ name: String, with value: String) -> [(String, String)] {
    validFields.map { $0.0 == name ? ($0.0, value) : $0 }
}

private func refusal(_ head: HTTPRequestHead) -> APIError? {
    do {
        _ = try WebSocketHandshake.validate(head)
        return nil
    } catch {
        return error
    }
}

@Suite struct HandshakeTests {
    @Test func acceptValueOfTheRFCExampleKey() {
        // RFC 6455 §1.3.
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func aValidRequestGetsA101WithTheAcceptValue() throws {
        let request = HTTPRequest(head: head())
        let response = try WebSocketServer.upgrade(request) { _ in WebSocketEchoHandler() }
        #expect(response.status == 101)
        #expect(response.upgrade != nil)
        #expect(response.headers["upgrade"] == "websocket")
        #expect(response.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(response.headers["sec-websocket-extensions"] == nil)
        #expect(response.headers["sec-websocket-protocol"] == nil)
    }

    @Test func tokensAreMatchedCaseInsensitivelyInLists() throws {
        let fields = replacing("Upgrade", with: "WebSocket").map {
            $0.0 == "Connection" ? ($0.0, "keep-alive, UPGRADE") : $0
        }
        #expect(throws: Never.self) { try WebSocketHandshake.validate(head(fields)) }
    }

    @Test func refusesAMethodOtherThanGETWith400() {
        #expect(refusal(head(method: .POST))?.status == 400)
        #expect(refusal(head(method: .POST))?.code == 1200)
    }

    @Test func refusesHTTP10With400() {
        #expect(refusal(head(version: .http1_0))?.status == 400)
    }

    @Test func refusesAMissingUpgradeHeaderWith426() {
        let error = refusal(head(without("Upgrade")))
        #expect(error?.status == 426)
        #expect(error?.code == 1201)
        #expect(error?.headers["Upgrade"] == "websocket")
    }

    @Test func refusesAnUpgradeToAnotherProtocolWith426() {
        #expect(refusal(head(replacing("Upgrade", with: "h2c")))?.status == 426)
    }

    @Test func refusesAConnectionHeaderWithoutUpgradeWith400() {
        #expect(refusal(head(without("Connection")))?.status == 400)
        #expect(refusal(head(replacing("Connection", with: "keep-alive")))?.status == 400)
    }

    @Test func refusesAMissingKeyWith400() {
        let error = refusal(head(without("Sec-WebSocket-Key")))
        #expect(error?.status == 400)
        #expect(error?.code == 1200)
    }

    @Test(arguments: [
        "not base64!", "dGhlIHNhbXBsZSBub25j", "dGhlIHNhbXBsZSBub25jZSE=", "", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ])
    func refusesAKeyThatIsNotBase64Of16BytesWith400(key: String) {
        #expect(refusal(head(replacing("Sec-WebSocket-Key", with: key)))?.status == 400)
    }

    @Test func refusesTwoKeysWith400() {
        #expect(refusal(head(validFields + [("Sec-WebSocket-Key", "AAAAAAAAAAAAAAAAAAAAAA==")]))?.status == 400)
    }

    @Test func refusesAMissingVersionWith426NamingVersion13() {
        let error = refusal(head(without("Sec-WebSocket-Version")))
        #expect(error?.status == 426)
        #expect(error?.headers["Sec-WebSocket-Version"] == "13")
    }

    @Test(arguments: ["8", "12", "14", "13, 8", ""])
    func refusesAnotherVersionWith426NamingVersion13(version: String) {
        let error = refusal(head(replacing("Sec-WebSocket-Version", with: version)))
        #expect(error?.status == 426)
        #expect(error?.code == 1201)
        #expect(error?.headers["Sec-WebSocket-Version"] == "13")
    }

    @Test func picksTheClientsFirstSupportedSubprotocol() throws {
        var config = WebSocketConfiguration()
        config.subprotocols = ["parley.v1", "parley.v2"]
        let request = HTTPRequest(
            head: head(
                validFields + [
                    ("Sec-WebSocket-Protocol", "chat, parley.v2"),
                    ("Sec-WebSocket-Protocol", "parley.v1"),
                ]))
        let response = try WebSocketServer.upgrade(request, configuration: config) { _ in WebSocketEchoHandler() }
        #expect(response.headers["sec-websocket-protocol"] == "parley.v2")
    }

    @Test func clientChecksTheAcceptValue() throws {
        let handshake = WebSocketClientHandshake(key: "dGhlIHNhbXBsZSBub25jZQ==")
        let good = WebSocketClientHandshake.parseResponseHead(
            ArraySlice(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
                    .utf8))
        #expect(good != nil)
        #expect(throws: Never.self) { try handshake.validate(good!) }
        var bad = good!
        bad.headers[2].value = "AAAAAAAAAAAAAAAAAAAAAAAAAAA="
        #expect(throws: WebSocketClientError.self) { try handshake.validate(bad) }
        let request = String(decoding: handshake.request(host: "h:1", path: "/ws"), as: UTF8.self)
        #expect(request.hasPrefix("GET /ws HTTP/1.1\r\nHost: h:1\r\n"))
        #expect(request.contains("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"))
        #expect(request.hasSuffix("\r\n\r\n"))
    }
}

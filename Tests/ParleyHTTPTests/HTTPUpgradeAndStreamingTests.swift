import Foundation
import ParleyHTTP
import ParleyNet
import ParleyTestSupport
import Testing

/// Echoes every byte back: the smallest protocol that proves the upgrade hook hands over the stream.
final class EchoProtocol: ByteStreamHandler {
    var channel: ByteChannel?
    func channelActive(_ channel: ByteChannel, initialBytes: [UInt8]) {
        self.channel = channel
        if !initialBytes.isEmpty { channel.write(initialBytes) }
    }
    func channelRead(_ bytes: UnsafeRawBufferPointer) {
        if bytes.first == UInt8(ascii: "q") {
            channel?.close()
            return
        }
        channel?.write(Array(bytes))
    }
    func channelWritable() {}
    func channelClosed() { channel = nil }
    func serverShuttingDown() { channel?.close() }
}

private func upgradeRoutes(_ router: inout Router) {
    router.get("/echo-upgrade") { _, _ in
        var headers = HTTPHeaders()
        headers.add(name: "Upgrade", value: "echo")
        return HTTPResponse(status: 101, headers: headers, upgrade: HTTPUpgrade { _ in EchoProtocol() })
    }
    router.post("/upload", options: RouteOptions(bodyLimit: 8 << 20, streamBody: true)) { request, _ in
        guard case .stream(let stream) = request.body else { throw APIError.badRequest }
        var total = 0
        var checksum = 0
        for try await chunk in stream {
            total += chunk.count
            for byte in chunk { checksum = (checksum &+ Int(byte)) % 1_000_003 }
        }
        return .ok(["bytes": total, "checksum": checksum])
    }
    router.get("/slow") { _, _ in
        // Slower than a loop turn, so the connection sees the client's half-close before the answer.
        try await Task.sleep(for: .milliseconds(200))
        return .ok(["slow": true])
    }
}

@Suite(.serialized) struct HTTPUpgradeAndStreamingTests {
    @Test func upgradeHandsTheByteStreamOverIncludingBytesSentWithTheRequest() async throws {
        let live = try await LiveServer(routes: upgradeRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("GET /echo-upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nearly")
        let response = try client.readResponse()
        #expect(response.status == 101)
        #expect(response.header("connection") == "Upgrade")
        #expect(response.header("content-length") == nil)
        try client.send(" and late")
        let expected = Array("early and late".utf8)
        let received = try client.readBytes(expected.count)
        #expect(received == expected)
        try client.send("q")
        #expect(client.waitForClose())
        await live.stop()
    }

    @Test func streamedBodyArrivesWholeWithoutBuffering() async throws {
        let live = try await LiveServer(routes: upgradeRoutes)
        let client = try RawHTTPClient(port: live.port)
        let size = 5 << 20
        var body = [UInt8](repeating: 0, count: size)
        var checksum = 0
        for i in 0..<size {
            body[i] = UInt8(truncatingIfNeeded: i &* 31)
            checksum = (checksum &+ Int(body[i])) % 1_000_003
        }
        try client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(size)\r\n\r\n")
        try client.send(body)
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.bodyText.contains(#""bytes":\#(size)"#))
        #expect(response.bodyText.contains(#""checksum":\#(checksum)"#))
        // The connection stays usable after a fully read streamed body.
        try client.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        #expect(try client.readResponse().bodyText.contains(#""bytes":3"#))
        await live.stop()
    }

    @Test func streamedBodyOverTheRouteLimitIsRefusedWith413() async throws {
        let live = try await LiveServer(routes: upgradeRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: \(9 << 20)\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.bodyText.contains(#""code":1006"#))
        await live.stop()
    }

    @Test func chunkedStreamedBodyOverTheLimitFailsTheStreamWith413() async throws {
        let live = try await LiveServer(routes: upgradeRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        let chunk = [UInt8](repeating: 65, count: 1 << 20)
        var answered: RawHTTPClient.Response?
        for _ in 0..<10 {
            do {
                try client.send(Array("100000\r\n".utf8) + chunk + Array("\r\n".utf8))
            } catch {
                break
            }
        }
        answered = try? client.readResponse()
        #expect(answered?.status == 413)
        await live.stop()
    }

    @Test func clientThatHalfClosesAfterItsRequestStillGetsTheAnswer() async throws {
        let response = try await answerAfterHalfClose(
            "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        #expect(response.status == 200)
        #expect(response.bodyText.contains(#""bytes":3"#))
    }

    @Test func clientThatHalfClosesWhileASlowHandlerRunsStillGetsTheAnswer() async throws {
        let response = try await answerAfterHalfClose("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(response.status == 200)
        #expect(response.header("connection") == "close")
    }

    @Test func clientThatHalfClosesWhileReadingIsPausedStillGetsTheAnswer() async throws {
        // Over 64 KiB pipelined behind a slow request: the connection stops reading until it is answered, so it
        // hears of the half-close only as a hangup.
        let pipelined = String(repeating: "GET /never-parsed HTTP/1.1\r\nHost: x\r\n\r\n", count: 2500)
        let response = try await answerAfterHalfClose("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n" + pipelined)
        #expect(response.status == 200)
        #expect(response.header("connection") == "close")
    }

    @Test func clientThatHalfClosesInsideAStreamedBodyGetsTheHandlersErrorAnswer() async throws {
        // The body can never end: the handler's stream fails, and its error answer still goes out.
        let response = try await answerAfterHalfClose(
            "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nonly ten b")
        #expect(response.status == 400)
    }

    /// Sends `request`, half-closes (SHUT_WR) and returns the answer; the server must close after it.
    private func answerAfterHalfClose(_ request: String) async throws -> RawHTTPClient.Response {
        let live = try await LiveServer(routes: upgradeRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send(request)
        shutdown(client.fd, Int32(SHUT_WR))
        let response = try client.readResponse()
        #expect(client.waitForClose())
        await live.stop()
        return response
    }
}

import Foundation
import ParleyTestSupport
import Testing

@testable import ParleyHTTP

/// Slow and endless bodies over real sockets: the minimum body rate (buffered and streamed), 404/405 answered
/// without reading the body, and the global budget for buffered bodies. Deadlines are made small; nothing asserts
/// a duration.
@Suite(.serialized) struct HTTPBodyLimitLiveTests {
    private static func slowBodies(_ config: inout HTTPServerConfiguration) {
        config.minimumBodyBytesPerSecond = 10_000
        config.bodyGracePeriod = .milliseconds(300)
    }

    private static func routes(_ router: inout Router) {
        standardRoutes(&router)
        router.post("/upload", options: RouteOptions(bodyLimit: 8 << 20, streamBody: true)) { request, _ in
            guard case .stream(let stream) = request.body else { throw APIError.badRequest }
            var count = 0
            for try await chunk in stream { count += chunk.count }
            return .ok(["bytes": count])
        }
    }

    @Test func aBufferedBodyBelowTheMinimumRateGets408AndTheConnectionCloses() async throws {
        let live = try await LiveServer(configure: Self.slowBodies, routes: Self.routes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        try client.send([UInt8](repeating: 0x61, count: 100))
        let response = try client.readResponse()
        #expect(response.status == 408)
        #expect(response.bodyText.contains(#""code":1011"#))
        #expect(response.bodyText.contains("too slowly"))
        #expect(response.header("connection") == "close")
        #expect(client.waitForClose())
        #expect(live.server.bufferedBodyBytes == 0)
        await live.stop()
    }

    @Test func aStreamedBodyBelowTheMinimumRateGets408FromItsHandlerAndTheConnectionCloses() async throws {
        let live = try await LiveServer(configure: Self.slowBodies, routes: Self.routes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        try client.send("64\r\n" + String(repeating: "a", count: 100) + "\r\n")
        let response = try client.readResponse()
        #expect(response.status == 408)
        #expect(response.bodyText.contains("too slowly"))
        #expect(response.header("connection") == "close")
        #expect(client.waitForClose())
        await live.stop()
    }

    @Test func aBodyAboveTheMinimumRateIsReceivedWhole() async throws {
        let live = try await LiveServer(configure: Self.slowBodies, routes: Self.routes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 3000000\r\n\r\n")
        try client.send([UInt8](repeating: 0x61, count: 3_000_000))
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.bodyText.contains(#""bytes":3000000"#))
        await live.stop()
    }

    @Test func anUnknownPathWithAHugeBodyIsAnswered404AtOnceAndClosed() async throws {
        let live = try await LiveServer(routes: Self.routes)
        // 100 MB declared (over every limit), a little sent: the 404 comes from the head alone.
        let declared = try RawHTTPClient(port: live.port)
        try declared.send("POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n")
        try declared.send([UInt8](repeating: 0x61, count: 1000))
        let notFound = try declared.readResponse()
        #expect(notFound.status == 404)
        #expect(notFound.bodyText.contains(#""code":1004"#))
        #expect(notFound.header("connection") == "close")
        #expect(declared.waitForClose())
        // A body that never ends (chunked, never terminated) is not waited for either; nor a wrong method's.
        let endless = try RawHTTPClient(port: live.port, timeoutSeconds: 5)
        try endless.send("PUT /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
        let wrongMethod = try endless.readResponse()
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("allow") == "GET, HEAD")
        #expect(wrongMethod.header("connection") == "close")
        #expect(endless.waitForClose())
        #expect(live.server.bufferedBodyBytes == 0)
        await live.stop()
    }

    @Test func bodiesPastTheGlobalBudgetAreAnswered503AndClosedWhileOthersGoOn() async throws {
        let live = try await LiveServer(
            configure: { $0.bufferedBodyBudgetBytes = 100_000 }, routes: Self.routes)
        let holder = try RawHTTPClient(port: live.port)
        try holder.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 90000\r\n\r\n")
        try holder.send([UInt8](repeating: 0x61, count: 80_000))
        #expect(try await eventually { live.server.bufferedBodyBytes == 80_000 } != nil)
        let refused = try RawHTTPClient(port: live.port)
        try refused.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 50000\r\n\r\n")
        try refused.send([UInt8](repeating: 0x62, count: 50_000))
        let busy = try refused.readResponse()
        #expect(busy.status == 503)
        #expect(busy.bodyText.contains(#""code":1015"#))
        #expect(busy.header("retry-after") == "1")
        #expect(busy.header("connection") == "close")
        #expect(refused.waitForClose())
        // The first body still fits and is answered; the budget is given back with the answers.
        try holder.send([UInt8](repeating: 0x61, count: 10_000))
        let echoed = try holder.readResponse()
        #expect(echoed.status == 200)
        #expect(echoed.body.count == 90_000)
        #expect(try await eventually { live.server.bufferedBodyBytes == 0 } != nil)
        // Small bodies need no more than the budget holds.
        try holder.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        #expect(try holder.readResponse().bodyText == "hello")
        await live.stop()
    }
}

import Foundation
import Glibc
import ParleyHTTP
import ParleyTestSupport
import Synchronization
import Testing

@Suite(.serialized) struct HTTPServerLiveTests {
    @Test func answersInTheEnvelopeWithRouteParameters() async throws {
        let live = try await LiveServer(routes: standardRoutes)
        defer { Task { await live.stop() } }
        let client = try RawHTTPClient(port: live.port)
        try client.send("GET /users/a%20b HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.bodyText == #"{"code":0,"message":"ok","data":{"id":"a b"}}"#)
        #expect(response.header("content-type") == "application/json; charset=utf-8")
        #expect(response.header("x-request-id") != nil)
        #expect(response.header("date") != nil)
        try client.send("GET /files/app/2026/12/abc%2Fdef HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().bodyText.contains(#""key":"app/2026/12/abc/def""#))
        await live.stop()
    }

    @Test func unknownPathWrongMethodAndUnknownMethodGet404And405And501() async throws {
        let live = try await LiveServer(routes: standardRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
        let notFound = try client.readResponse()
        #expect(notFound.status == 404)
        #expect(notFound.bodyText.contains(#""code":1004"#))
        #expect(notFound.bodyText.hasSuffix(#""data":null}"#))
        try client.send("PUT /users/7 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        let wrongMethod = try client.readResponse()
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("allow") == "GET, HEAD, DELETE")
        try client.send("BREW /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        let unknownMethod = try client.readResponse()
        #expect(unknownMethod.status == 501)
        #expect(unknownMethod.header("connection") == "close")
        #expect(client.waitForClose())
        await live.stop()
    }

    @Test func malformedRequestsGetTheirStatusAndTheConnectionCloses() async throws {
        let live = try await LiveServer(routes: standardRoutes)
        let cases: [(String, Int)] = [
            ("GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("GET /hello HTTP/1.1\r\n\r\n", 400),
            ("GET /hello HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400),
            ("GET /hello HTTP/2.0\r\nHost: x\r\n\r\n", 505),
            ("GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n", 431),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", 413),
        ]
        for (request, status) in cases {
            let client = try RawHTTPClient(port: live.port)
            try client.send(request)
            let response = try client.readResponse()
            #expect(response.status == status, "\(request.prefix(60))")
            #expect(response.header("connection") == "close")
            #expect(response.bodyText.contains(#""data":null"#))
            #expect(client.waitForClose(), "connection should close after \(status)")
        }
        await live.stop()
    }

    @Test func pipelinedBurstOf100IsAnsweredInOrder() async throws {
        let live = try await LiveServer(routes: standardRoutes)
        let client = try RawHTTPClient(port: live.port)
        var burst = ""
        for i in 0..<100 {
            if i % 3 == 0 {
                burst += "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(String(i).utf8.count)\r\n\r\n\(i)"
            } else if i % 3 == 1 {
                burst += "GET /users/\(i) HTTP/1.1\r\nHost: x\r\n\r\n"
            } else {
                burst += "GET /slow?i=\(i) HTTP/1.1\r\nHost: x\r\n\r\n".replacingOccurrences(
                    of: "/slow", with: "/users/\(i)")
            }
        }
        try client.send(burst)
        for i in 0..<100 {
            let response = try client.readResponse()
            #expect(response.status == 200)
            if i % 3 == 0 {
                #expect(response.bodyText == String(i))
            } else {
                #expect(response.bodyText.contains(#""id":"\#(i)""#))
            }
        }
        await live.stop()
    }

    /// Responses are serialized into the loop's scratch memory and sent from there; whatever a reader that is not
    /// keeping up leaves unsent must be kept, in order, byte for byte. 250 pipelined answers of 60,000 bytes (15 MB,
    /// more than loopback's socket buffers hold) to a client that waits before reading.
    @Test func aReaderThatFallsBehindGetsEveryByteInOrder() async throws {
        let size = 60_000
        let live = try await LiveServer { router in
            router.get("/blob/{n}") { _, context in
                let n = try context.parameter("n")
                var body = Array("\(n):".utf8)
                body += [UInt8](repeating: UInt8(ascii: "a") + UInt8(Int(n)! % 26), count: size - body.count)
                return HTTPResponse(status: 200, body: body)
            }
        }
        let client = try RawHTTPClient(port: live.port)
        var burst = ""
        for i in 0..<250 { burst += "GET /blob/\(i) HTTP/1.1\r\nHost: x\r\n\r\n" }
        try client.send(burst)
        try await Task.sleep(for: .milliseconds(300))
        for i in 0..<250 {
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.body.count == size)
            let prefix = Array("\(i):".utf8)
            #expect(Array(response.body.prefix(prefix.count)) == prefix, "response \(i) out of order")
            let fill = UInt8(ascii: "a") + UInt8(i % 26)
            #expect(response.body.dropFirst(prefix.count).allSatisfy { $0 == fill }, "response \(i) corrupted")
        }
        await live.stop()
    }

    @Test func keepAliveRulesForHTTP10AndConnectionClose() async throws {
        let live = try await LiveServer(routes: standardRoutes)
        let old = try RawHTTPClient(port: live.port)
        try old.send("GET /hello HTTP/1.0\r\n\r\n")
        #expect(try old.readResponse().status == 200)
        #expect(old.waitForClose())

        let oldKeepAlive = try RawHTTPClient(port: live.port)
        try oldKeepAlive.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let first = try oldKeepAlive.readResponse()
        #expect(first.header("connection") == "keep-alive")
        try oldKeepAlive.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try oldKeepAlive.readResponse().status == 200)

        let closing = try RawHTTPClient(port: live.port)
        try closing.send("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try closing.readResponse().header("connection") == "close")
        #expect(closing.waitForClose())
        await live.stop()
    }

    @Test func expectContinueGets100ThenTheAnswer() async throws {
        let live = try await LiveServer(routes: standardRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        let interim = try client.readResponse()
        #expect(interim.status == 100)
        try client.send("hello")
        let final = try client.readResponse()
        #expect(final.status == 200)
        #expect(final.bodyText == "hello")
        await live.stop()
    }

    @Test func chunkedRequestBodyIsReassembled() async throws {
        let live = try await LiveServer(routes: standardRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send(
            "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n"
        )
        #expect(try client.readResponse().bodyText == "hello world")
        await live.stop()
    }

    @Test func headAnswersWithoutBody() async throws {
        let live = try await LiveServer(routes: standardRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse(headRequest: true)
        #expect(response.status == 200)
        #expect(Int(response.header("content-length") ?? "") ?? 0 > 0)
        try client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().bodyText.contains("hello"))
        await live.stop()
    }

    @Test func errorsAreMappedOnceAndInternalsDoNotLeak() async throws {
        let live = try await LiveServer(routes: standardRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("GET /fail HTTP/1.1\r\nHost: x\r\n\r\n")
        let fail = try client.readResponse()
        #expect(fail.status == 400)
        #expect(fail.bodyText == #"{"code":1002,"message":"nope","data":null}"#)
        try client.send("GET /crash HTTP/1.1\r\nHost: x\r\n\r\n")
        let crash = try client.readResponse()
        #expect(crash.status == 500)
        #expect(crash.bodyText == #"{"code":1500,"message":"internal server error","data":null}"#)
        #expect(live.sink.capturedText.contains("Secret"))
        await live.stop()
    }

    @Test func slowHeadersTimeOutWith408() async throws {
        let live = try await LiveServer(configure: { $0.headerTimeout = .seconds(1) }, routes: standardRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("GET /hello HTTP/1.1\r\nHost: x\r\n")
        let start = Date()
        let response = try client.readResponse()
        #expect(response.status == 408)
        #expect(client.waitForClose())
        #expect(Date().timeIntervalSince(start) < 5)
        await live.stop()
    }

    @Test func idleKeepAliveConnectionsAreClosed() async throws {
        let live = try await LiveServer(configure: { $0.idleTimeout = .seconds(1) }, routes: standardRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        let start = Date()
        #expect(client.waitForClose())
        #expect(Date().timeIntervalSince(start) < 5)
        await live.stop()
    }

    @Test func connectionsBeyondTheLimitAreRefusedWith503() async throws {
        let live = try await LiveServer(configure: { $0.maxConnections = 2 }, routes: standardRoutes)
        let a = try RawHTTPClient(port: live.port)
        let b = try RawHTTPClient(port: live.port)
        try a.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        try b.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try a.readResponse().status == 200)
        #expect(try b.readResponse().status == 200)
        let c = try RawHTTPClient(port: live.port)
        #expect(try c.readResponse().status == 503)
        await live.stop()
    }

    @Test func gracefulShutdownFinishesInFlightRequestsAndClosesIdleOnes() async throws {
        let started = Atomic<Bool>(false)
        let live = try await LiveServer { router in
            standardRoutes(&router)
            router.get("/held") { _, _ in
                started.store(true, ordering: .relaxed)
                try await Task.sleep(for: .milliseconds(1200))
                return .ok(["slow": true])
            }
        }
        let idle = try RawHTTPClient(port: live.port)
        try idle.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try idle.readResponse().status == 200)
        let busy = try RawHTTPClient(port: live.port)
        try busy.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
        // In flight before the shutdown starts (a request still unread counts as idle and is closed).
        #expect(try await eventually { started.load(ordering: .relaxed) } != nil)
        let pending = Task { try await onDedicatedThread { try busy.readResponse() } }
        await live.stop()
        let response = try await pending.value
        #expect(response.status == 200)
        #expect(response.header("connection") == "close")
        #expect(idle.waitForClose())
        #expect(throws: (any Error).self) { _ = try RawHTTPClient(port: live.port) }
    }
}

@Suite struct ResponseSerializerTests {
    @Test func headerValuesCannotSplitTheResponse() {
        var headers = HTTPHeaders()
        headers.add(name: "X-Note", value: "a\r\nSet-Cookie: evil=1")
        let bytes = ResponseSerializer().serialize(
            HTTPResponse(status: 200, headers: headers, body: Array("ok".utf8)),
            requestMethod: .GET, requestVersion: .http1_1, keepAlive: true,
            date: Array("Tue, 01 Dec 2026 00:00:00 GMT".utf8))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("X-Note: aSet-Cookie: evil=1\r\n"))
        #expect(!text.contains("\r\nSet-Cookie"))
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(text.contains("Content-Length: 2\r\n"))
        #expect(text.hasSuffix("\r\n\r\nok"))
    }

    @Test func noBodyForHeadAnd304() {
        let response = HTTPResponse(status: 200, body: Array("hello".utf8))
        let head = ResponseSerializer().serialize(
            response, requestMethod: .HEAD, requestVersion: .http1_1, keepAlive: true,
            date: [])
        #expect(String(decoding: head, as: UTF8.self).hasSuffix("Content-Length: 5\r\nDate: \r\n\r\n"))
        let notModified = ResponseSerializer().serialize(
            HTTPResponse(status: 304), requestMethod: .GET,
            requestVersion: .http1_1, keepAlive: true, date: [])
        #expect(!String(decoding: notModified, as: UTF8.self).contains("Content-Length"))
    }
}

import ParleyHTTP
import ParleyNet
import ParleyTestSupport
import ParleyWebSocket
import Testing

private func routes(_ recorder: SessionRecorder) -> (inout Router, WebSocketMetrics) -> Void {
    { router, metrics in
        var echo = WebSocketEchoHandler.configuration
        echo.metrics = metrics
        echo.closeTimeout = .seconds(1)
        router.get("/ws/echo") { [echo] request, _ in
            try WebSocketServer.upgrade(request, configuration: echo) { _ in RecordingEchoHandler(recorder: recorder) }
        }
        var small = WebSocketConfiguration()
        small.maxFrameBytes = 1024
        small.maxMessageBytes = 2048
        router.get("/ws/small") { [small] request, _ in
            try WebSocketServer.upgrade(request, configuration: small) { _ in RecordingEchoHandler(recorder: recorder) }
        }
        var flood = WebSocketConfiguration()
        flood.maxBufferedOutgoingBytes = 2 << 20
        flood.closeTimeout = .milliseconds(300)
        router.get("/ws/flood") { [flood] request, _ in
            try WebSocketServer.upgrade(request, configuration: flood) { _ in FloodHandler(recorder: recorder) }
        }
        var heartbeat = WebSocketConfiguration()
        heartbeat.pingInterval = .milliseconds(100)
        heartbeat.closeTimeout = .milliseconds(300)
        router.get("/ws/heartbeat") { [heartbeat] request, _ in
            try WebSocketServer.upgrade(request, configuration: heartbeat) { _ in
                RecordingEchoHandler(recorder: recorder)
            }
        }
    }
}

/// Starts a server with the test routes, runs `body`, and always stops the server.
private func withLiveServer(_ body: (LiveWebSocketServer, SessionRecorder) async throws -> Void) async throws {
    let recorder = SessionRecorder()
    let live = try await LiveWebSocketServer(routes: routes(recorder))
    do {
        try await body(live, recorder)
    } catch {
        await live.stop()
        throw error
    }
    await live.stop()
}

@Suite(.serialized) struct LiveWebSocketTests {
    @Test func echoesTextAndBinaryMessages() async throws {
        try await withLiveServer { live, _ in
            let port = live.port
            try await onDedicatedThread {
                let client = try WebSocketClient(port: port, path: "/ws/echo")
                for text in ["hello", "", "κόσμε 👍🏽", String(repeating: "x", count: 70_000)] {
                    try client.send(text: text)
                    #expect(try client.receiveMessage() == .text(text))
                }
                let big = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                for bytes in [[], [0, 255], big] {
                    try client.send(binary: bytes)
                    #expect(try client.receiveMessage() == .binary(bytes))
                }
                #expect(try client.close() == .normalClosure)
            }
        }
    }

    @Test func echoesFragmentedMessagesWithAPingBetweenTheFragments() async throws {
        try await withLiveServer { live, _ in
            let port = live.port
            try await onDedicatedThread {
                let client = try WebSocketClient(port: port, path: "/ws/echo")
                try client.sendFrame(opcode: .text, payload: Array("Hel".utf8), fin: false)
                try client.sendPing([1, 2, 3])
                try client.sendFrame(opcode: .continuation, payload: [0xE2, 0x82], fin: false)
                try client.sendFrame(opcode: .continuation, payload: [0xAC] + Array("lo".utf8), fin: true)
                #expect(try client.receiveEvent() == .pong([1, 2, 3]))
                #expect(try client.receiveEvent() == .text("Hel€lo"))
                try client.sendFrame(opcode: .binary, payload: [1], fin: false)
                try client.sendFrame(opcode: .continuation, payload: [], fin: false)
                try client.sendFrame(opcode: .continuation, payload: [2, 3], fin: true)
                #expect(try client.receiveEvent() == .binary([1, 2, 3]))
                try client.close()
            }
        }
    }

    @Test func answersPingsWithTheSamePayload() async throws {
        try await withLiveServer { live, _ in
            let port = live.port
            try await onDedicatedThread {
                let client = try WebSocketClient(port: port, path: "/ws/echo")
                for payload in [[], [42], (0..<125).map { UInt8($0) }] {
                    try client.sendPing(payload)
                    #expect(try client.receiveEvent() == .pong(payload))
                }
                try client.close()
            }
        }
    }

    @Test func aClientCloseIsEchoedAndTheServerClosesTCPFirst() async throws {
        try await withLiveServer { live, recorder in
            let port = live.port
            try await onDedicatedThread {
                let client = try WebSocketClient(port: port, path: "/ws/echo")
                try client.sendClose(code: WebSocketCloseCode(4321), reason: "done")
                #expect(try client.receiveEvent() == .close(code: WebSocketCloseCode(4321), reason: ""))
                #expect(client.waitForServerClose(timeout: .seconds(2)))
            }
            let snapshot = await recorder.wait { !$0.closedCodes.isEmpty }
            #expect(snapshot.closedCodes == [WebSocketCloseCode(4321)])
        }
    }

    @Test func failsAnUnmaskedFrameWith1002() async throws {
        try await withLiveServer { live, recorder in
            let port = live.port
            try await onDedicatedThread {
                let client = try WebSocketClient(port: port, path: "/ws/echo")
                try client.sendRaw([0x81, 0x02, 0x68, 0x69])
                guard case .close(let code, _) = try client.receiveEvent() else {
                    throw TestFailure("expected a Close")
                }
                #expect(code == .protocolError)
                // The client answered the Close; the server then closes TCP.
                #expect(client.waitForServerClose(timeout: .seconds(2)))
            }
            #expect(await recorder.wait { !$0.closedCodes.isEmpty }.closedCodes == [.protocolError])
        }
    }

    @Test func failsInvalidUTF8With1007() async throws {
        try await withLiveServer { live, _ in
            let port = live.port
            try await onDedicatedThread {
                let client = try WebSocketClient(port: port, path: "/ws/echo")
                try client.sendFrame(opcode: .text, payload: Array("κόσμε".utf8) + [0xF4], fin: false)
                try client.sendFrame(opcode: .continuation, payload: [0x90, 0x80, 0x80], fin: false)
                guard case .close(let code, _) = try client.receiveEvent() else {
                    throw TestFailure("expected a Close")
                }
                #expect(code == .invalidPayload)
                #expect(client.waitForServerClose(timeout: .seconds(2)))
            }
        }
    }

    @Test func failsOversizedFramesAndMessagesWith1009() async throws {
        try await withLiveServer { live, _ in
            let port = live.port
            try await onDedicatedThread {
                let frameTooBig = try WebSocketClient(port: port, path: "/ws/small")
                try frameTooBig.send(binary: [UInt8](repeating: 1, count: 1025))
                guard case .close(let code, _) = try frameTooBig.receiveEvent() else {
                    throw TestFailure("expected a Close")
                }
                #expect(code == .messageTooBig)

                let client = try WebSocketClient(port: port, path: "/ws/small")
                try client.sendFrame(opcode: .binary, payload: [UInt8](repeating: 2, count: 800), fin: false)
                try client.sendFrame(opcode: .continuation, payload: [UInt8](repeating: 2, count: 800), fin: false)
                try client.sendFrame(opcode: .continuation, payload: [UInt8](repeating: 2, count: 800), fin: true)
                guard case .close(let code2, _) = try client.receiveEvent() else {
                    throw TestFailure("expected a Close")
                }
                #expect(code2 == .messageTooBig)
            }
        }
    }

    @Test func refusesABadHandshakeBeforeUpgradingAndKeepsTheConnection() async throws {
        try await withLiveServer { live, _ in
            let port = live.port
            try await onDedicatedThread {
                let http = try RawHTTPClient(port: port)
                try http.send("GET /ws/echo HTTP/1.1\r\nHost: x\r\n\r\n")
                let plain = try http.readResponse()
                #expect(plain.status == 426)
                #expect(plain.header("sec-websocket-version") == "13")
                #expect(plain.header("upgrade") == "websocket")
                #expect(plain.bodyText.contains(#""code":1201"#))
                try http.send(
                    "GET /ws/echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n")
                let badKey = try http.readResponse()
                #expect(badKey.status == 400)
                #expect(badKey.bodyText.contains(#""code":1200"#))
                try http.send(
                    "GET /ws/echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
                #expect(try http.readResponse().status == 426)
            }
        }
    }

    @Test func processesFrameBytesThatArriveWithTheUpgradeRequest() async throws {
        try await withLiveServer { live, _ in
            let port = live.port
            try await onDedicatedThread {
                let http = try RawHTTPClient(port: port)
                let frame = WebSocketFrameEncoder.client.encodeText("early")
                try http.send(
                    Array(
                        ("GET /ws/echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").utf8)
                        + frame)
                let response = try http.readResponse()
                #expect(response.status == 101)
                #expect(response.header("sec-websocket-accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
                #expect(try http.readBytes(7) == [0x81, 0x05] + Array("early".utf8))
            }
        }
    }

    @Test func pipelinedMessagesComeBackInOrder() async throws {
        try await withLiveServer { live, _ in
            let port = live.port
            try await onDedicatedThread {
                let client = try WebSocketClient(port: port, path: "/ws/echo")
                var batch: [UInt8] = []
                for i in 0..<2_000 { batch += WebSocketFrameEncoder.client.encodeText("message \(i)") }
                try client.sendRaw(batch)
                for i in 0..<2_000 {
                    guard try client.receiveMessage() == .text("message \(i)") else {
                        throw TestFailure("message \(i) out of order")
                    }
                }
                try client.close()
            }
        }
    }

    @Test func aClientThatStopsReadingIsCutOffWithBoundedMemory() async throws {
        try await withLiveServer { live, recorder in
            let port = live.port
            // Connects and never reads: the server floods it with 64 KiB messages.
            let stalled = try await onDedicatedThread { try WebSocketClient(port: port, path: "/ws/flood") }
            let snapshot = await recorder.wait { $0.closedCodes.contains(.slowConsumer) }
            #expect(snapshot.closedCodes == [.slowConsumer])
            #expect(snapshot.results == [.accepted, .backpressured, .dropped])
            // The bound: 2 MiB plus at most the one frame that crossed it.
            #expect(snapshot.peakBufferedBytes <= (2 << 20) + 64 * 1024 + 14)
            #expect(snapshot.acceptedSends < 2_000)
            // Meanwhile everyone else is served as usual.
            try await onDedicatedThread {
                let other = try WebSocketClient(port: port, path: "/ws/echo")
                try other.send(text: "still here")
                #expect(try other.receiveMessage(timeout: .seconds(2)) == .text("still here"))
                try other.close()
            }
            // The stalled client finds its connection gone once it reads what the kernel buffered.
            let ended = try await onDedicatedThread { () -> Bool in
                while true {
                    do {
                        if case .close(let code, _) = try stalled.receiveEvent(timeout: .seconds(5)) {
                            return code == .slowConsumer
                        }
                    } catch let error as WebSocketClientError {
                        return error.kind == .connectionClosed
                    }
                }
            }
            #expect(ended)
        }
    }

    @Test func heartbeatPingsKeepAnAnsweringClientOpen() async throws {
        try await withLiveServer { live, recorder in
            let port = live.port
            try await onDedicatedThread {
                let client = try WebSocketClient(port: port, path: "/ws/heartbeat")
                var pings = 0
                let deadline = ContinuousClock.now + .milliseconds(700)
                while ContinuousClock.now < deadline {
                    do {
                        if case .ping = try client.receiveEvent(timeout: .milliseconds(100)) { pings += 1 }
                    } catch let error as WebSocketClientError where error.kind == .timeout {
                        continue
                    }
                }
                #expect(pings >= 3)
                try client.send(text: "alive")
                #expect(try client.receiveMessage() == .text("alive"))
                try client.close()
            }
            #expect(recorder.snapshot.closedCodes.allSatisfy { $0 == .normalClosure })
        }
    }

    @Test func heartbeatDropsAClientThatMissesTwoPongs() async throws {
        try await withLiveServer { live, recorder in
            let port = live.port
            let (pings, closeCode) = try await onDedicatedThread { () -> (Int, WebSocketCloseCode?) in
                let client = try WebSocketClient(port: port, path: "/ws/heartbeat")
                client.answersPings = false
                var pings = 0
                while true {
                    do {
                        switch try client.receiveEvent(timeout: .seconds(3)) {
                        case .ping: pings += 1
                        case .close(let code, _): return (pings, code)
                        default: continue
                        }
                    } catch let error as WebSocketClientError where error.kind == .connectionClosed {
                        return (pings, nil)
                    }
                }
            }
            // Two unanswered pings, then the heartbeat close: the schedule is in the count, not in a wall clock.
            #expect(pings == 2)
            #expect(closeCode == .heartbeatTimeout)
            #expect(await recorder.wait { !$0.closedCodes.isEmpty }.closedCodes == [.heartbeatTimeout])
        }
    }

    @Test func gracefulShutdownSendsGoingAway() async throws {
        let recorder = SessionRecorder()
        let live = try await LiveWebSocketServer(routes: routes(recorder))
        let port = live.port
        let client = try await onDedicatedThread { try WebSocketClient(port: port, path: "/ws/echo") }
        #expect(await recorder.wait { $0.opened == 1 }.opened == 1)
        #expect(live.metric("parley_websocket_open_sessions") == 1)
        let started = ContinuousClock.now
        async let stopped: Void = live.stop(grace: .seconds(60))
        let (event, serverClosed) = try await onDedicatedThread {
            (try client.receiveEvent(timeout: .seconds(3)), client.waitForServerClose(timeout: .seconds(3)))
        }
        await stopped
        #expect(event == .close(code: .goingAway, reason: "server shutting down"))
        #expect(serverClosed)
        // The client answered at once, so shutdown did not wait out its grace period (a minute: far above any
        // load's delay).
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(recorder.snapshot.closedCodes == [.goingAway])
        #expect(live.metric("parley_websocket_open_sessions") == 0)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import Glibc
import ParleyNet
import ParleyObservability
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyHTTP

@Suite struct AcceptBackoffTests {
    @Test func nothingPendingWaitsForTheListener() {
        var backoff = AcceptBackoff()
        #expect(backoff.acceptFailed(errno: EAGAIN) == .wait)
        #expect(backoff.nextPause == AcceptBackoff.firstPause)
    }

    @Test func aConnectionThatFailedBeforeItWasAcceptedIsSkipped() {
        var backoff = AcceptBackoff()
        for code in [ECONNABORTED, EINTR, EPROTO, ENETUNREACH] {
            #expect(backoff.acceptFailed(errno: code) == .acceptNext)
        }
        #expect(backoff.nextPause == AcceptBackoff.firstPause)
    }

    @Test func outOfDescriptorsPausesLongerEachTimeUpToOneSecond() {
        var backoff = AcceptBackoff()
        var pauses: [AcceptBackoff.Action] = []
        for _ in 0..<9 { pauses.append(backoff.acceptFailed(errno: EMFILE)) }
        #expect(pauses == [10, 20, 40, 80, 160, 320, 640, 1000, 1000].map { .pause(.milliseconds($0)) })
        #expect(backoff.acceptFailed(errno: ENFILE) == .pause(.seconds(1)))
    }

    @Test func anAcceptedConnectionResetsThePause() {
        var backoff = AcceptBackoff()
        _ = backoff.acceptFailed(errno: EMFILE)
        _ = backoff.acceptFailed(errno: ENOBUFS)
        backoff.connectionAccepted()
        #expect(backoff.acceptFailed(errno: ENOMEM) == .pause(.milliseconds(10)))
    }

    @Test func anUnknownErrorPausesRatherThanSpins() {
        var backoff = AcceptBackoff()
        #expect(backoff.acceptFailed(errno: EBADF) == .pause(.milliseconds(10)))
    }

    @Test func theConnectionLimitLeavesATenthOfTheOpenFilesLimitFree() {
        #expect(HTTPServer.connectionsAllowed(byOpenFilesLimit: 20_000) == 18_000)
        #expect(HTTPServer.connectionsAllowed(byOpenFilesLimit: 1_024) == 922)
        #expect(HTTPServer.connectionsAllowed(byOpenFilesLimit: 256) == 192)
        #expect(HTTPServer.connectionsAllowed(byOpenFilesLimit: 50) == 1)
        #expect(HTTPServer.connectionsAllowed(byOpenFilesLimit: Int.max) == Int.max)
    }
}

/// accept4 that fails with EMFILE while `failing` is set, counting the calls.
private final class AcceptGate: Sendable {
    let state = Mutex<(failing: Bool, calls: Int)>((true, 0))

    func accept(_ listener: Int32) -> Socket.AcceptResult {
        let failing = state.withLock { state in
            state.calls += 1
            return state.failing
        }
        return failing ? .failed(errno: EMFILE) : Socket.accept(listener)
    }
}

@Suite(.serialized) struct AcceptBackoffLiveTests {
    private func server(
        maxConnections: Int = 100_000, openFilesLimit: Int = 1 << 20,
        accept: @escaping @Sendable (Int32) -> Socket.AcceptResult = Socket.accept
    )
        throws -> (HTTPServer, EventLoopGroup, LogSink)
    {
        let group = try EventLoopGroup(threads: 1)
        let sink = LogSink(capturingAt: .info)
        var router = Router()
        standardRoutes(&router)
        var config = HTTPServerConfiguration()
        config.host = "127.0.0.1"
        config.port = 0
        config.maxConnections = maxConnections
        let server = HTTPServer(
            configuration: config, group: group, responder: HTTPResponder(router: router, middleware: []),
            logger: Logger(sink: sink), metrics: MetricsRegistry(),
            openFilesLimit: openFilesLimit, accept: accept)
        return (server, group, sink)
    }

    @Test func outOfDescriptorsTheListenerPausesInsteadOfSpinningAndResumesByItself() async throws {
        let gate = AcceptGate()
        let (server, group, sink) = try server(accept: gate.accept)
        let port = try await server.start()
        let client = try RawHTTPClient(port: port) // completed by the kernel; waits in the backlog
        try client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        try await Task.sleep(for: .milliseconds(400))
        // Level-triggered epoll would call accept millions of times in 400 ms; the pauses allow a handful.
        let calls = gate.state.withLock { $0.calls }
        #expect(calls >= 2 && calls < 40, "accept called \(calls) times in 400 ms")
        #expect(sink.capturedText.contains("accept failed: not accepting for a while"))

        gate.state.withLock { $0.failing = false } // descriptors are free again
        let started = Date()
        #expect(try client.readResponse().status == 200)
        #expect(Date().timeIntervalSince(started) < 3)
        await server.shutdown(grace: .seconds(1))
        group.shutdown()
    }

    @Test func aConnectionLimitAboveTheOpenFilesLimitIsLoweredBelowIt() throws {
        let (server, group, sink) = try server(maxConnections: 100_000, openFilesLimit: 256)
        #expect(server.configuration.maxConnections == 192)
        #expect(sink.capturedText.contains("connection limit lowered to fit the open-files limit"))
        group.shutdown()
    }
}

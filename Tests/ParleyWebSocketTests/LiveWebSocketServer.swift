import ParleyHTTP
import ParleyNet
import ParleyObservability
import ParleyTestSupport
import ParleyWebSocket
import Synchronization

/// A real HTTP server on 127.0.0.1:0 with WebSocket routes, for tests that talk over sockets.
final class LiveWebSocketServer: Sendable {
    let group: EventLoopGroup
    let server: HTTPServer
    let port: UInt16
    let metrics: MetricsRegistry

    init(
        configureHTTP: (inout HTTPServerConfiguration) -> Void = { _ in },
        routes: (inout Router, WebSocketMetrics) -> Void
    ) async throws {
        group = try EventLoopGroup(threads: 2)
        let logger = Logger(sink: LogSink(capturingAt: .info))
        metrics = MetricsRegistry()
        let wsMetrics = WebSocketMetrics(registry: metrics)
        var router = Router()
        routes(&router, wsMetrics)
        let responder = HTTPResponder(router: router, middleware: [RequestIDMiddleware()])
        var config = HTTPServerConfiguration()
        config.host = "127.0.0.1"
        config.port = 0
        configureHTTP(&config)
        server = HTTPServer(configuration: config, group: group, responder: responder, logger: logger, metrics: metrics)
        port = try await server.start()
    }

    func stop(grace: Duration = .seconds(3)) async {
        await server.shutdown(grace: grace)
        group.shutdown()
    }

    /// A value of a metric line in the Prometheus text, e.g. `parley_websocket_open_sessions`.
    func metric(_ series: String) -> Double? {
        for line in metrics.render().split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.split(separator: " ").last ?? "")
        }
        return nil
    }
}

/// What a test handler saw, readable from the test's thread.
final class SessionRecorder: Sendable {
    struct Snapshot: Sendable {
        var opened = 0
        var closedCodes: [WebSocketCloseCode] = []
        var peakBufferedBytes = 0
        var acceptedSends = 0
        var results: [WebSocketSendResult] = []
    }

    private let state = Mutex(Snapshot())

    func update(_ body: (inout Snapshot) -> Void) { state.withLock { body(&$0) } }
    var snapshot: Snapshot { state.withLock { $0 } }

    /// Polls until `condition` holds or `timeout` passes.
    func wait(timeout: Duration = .seconds(5), until condition: (Snapshot) -> Bool) async -> Snapshot {
        _ = try? await eventually(timeout: timeout) { condition(snapshot) }
        return snapshot
    }
}

/// Records open/close; on open it floods binary messages until the session refuses them.
final class FloodHandler: WebSocketSessionHandler {
    let recorder: SessionRecorder
    let messageBytes: Int
    let maxMessages: Int

    init(recorder: SessionRecorder, messageBytes: Int = 64 * 1024, maxMessages: Int = 2_000) {
        self.recorder = recorder
        self.messageBytes = messageBytes
        self.maxMessages = maxMessages
    }

    func sessionOpened(_ session: WebSocketSession) {
        recorder.update { $0.opened += 1 }
        // Encoded once, sent many times: the fan-out path.
        let frame = WebSocketFrameEncoder.server.encode(
            opcode: .binary, payload: [UInt8](repeating: 0x5A, count: messageBytes))
        for _ in 0..<maxMessages {
            let result = session.send(encodedFrame: frame)
            let buffered = session.bufferedOutgoingBytes
            recorder.update {
                $0.peakBufferedBytes = max($0.peakBufferedBytes, buffered)
                if result != .dropped { $0.acceptedSends += 1 }
                if $0.results.last != result { $0.results.append(result) }
            }
            if result == .dropped { break }
        }
    }

    func sessionClosed(_ session: WebSocketSession, code: WebSocketCloseCode, reason: String) {
        recorder.update { $0.closedCodes.append(code) }
    }
}

/// Echoes like `WebSocketEchoHandler` and records how sessions end.
final class RecordingEchoHandler: WebSocketSessionHandler {
    let recorder: SessionRecorder
    let echo = WebSocketEchoHandler()

    init(recorder: SessionRecorder) { self.recorder = recorder }

    func sessionOpened(_ session: WebSocketSession) { recorder.update { $0.opened += 1 } }
    func textReceived(_ text: String, session: WebSocketSession) { echo.textReceived(text, session: session) }
    func binaryReceived(_ bytes: [UInt8], session: WebSocketSession) { echo.binaryReceived(bytes, session: session) }
    func sessionWritable(_ session: WebSocketSession) { echo.sessionWritable(session) }
    func sessionClosed(_ session: WebSocketSession, code: WebSocketCloseCode, reason: String) {
        recorder.update { $0.closedCodes.append(code) }
    }
}

import Foundation
import ParleyHTTP
import ParleyNet
import ParleyObservability
import Synchronization

/// An app's backend for the tests: Parley's own HTTP server on 127.0.0.1, recording every webhook call and
/// answering as told. `stop()` and `start()` take it down and bring it back on the same port (calls meanwhile are
/// refused connections, as for a backend that is down).
final class WebhookReceiver: Sendable {
    struct Call: @unchecked Sendable {
        var target: String
        var headers: [String: String]
        var body: [UInt8]
        var status: Int
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
        var event: String? { json["event"] as? String }
        var eventId: String? { json["eventId"] as? String }
        var data: [String: Any] { json["data"] as? [String: Any] ?? [:] }
        var message: [String: Any] { data["message"] as? [String: Any] ?? [:] }
        /// The envelopes of a call carrying several events (`{"events": [...]}`).
        var events: [[String: Any]] { json["events"] as? [[String: Any]] ?? [] }
    }

    /// How after-events are answered.
    enum Mode: Sendable {
        case accept
        case fail(status: Int)
    }

    /// How before_send is answered, from the message content it carries.
    typealias BeforeSendRule = @Sendable (_ content: Any?) async -> String

    private struct State {
        var calls: [Call] = []
        var mode: Mode = .accept
        var server: HTTPServer?
    }

    let group: EventLoopGroup
    let metrics = MetricsRegistry()
    private let state = Mutex(State())
    private let portValue = Atomic<UInt16>(0)
    let beforeSend: BeforeSendRule

    var port: UInt16 { portValue.load(ordering: .relaxed) }
    var url: String { "http://127.0.0.1:\(port)/hooks/parley?tenant=test" }

    init(beforeSend: @escaping BeforeSendRule = { _ in #"{"action":"allow"}"# }) async throws {
        group = try EventLoopGroup(threads: 1)
        self.beforeSend = beforeSend
        try await start()
    }

    func start() async throws {
        var router = Router()
        router.post("/hooks/parley") { [self] request, _ in try await handle(request) }
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = port
        let server = HTTPServer(
            configuration: configuration, group: group, responder: HTTPResponder(router: router, middleware: []),
            logger: Logger(sink: LogSink(capturingAt: .error)), metrics: metrics)
        portValue.store(try await server.start(), ordering: .relaxed)
        state.withLock { $0.server = server }
    }

    func stop() async {
        guard
            let server = state.withLock({ state in
                defer { state.server = nil }; return state.server
            })
        else { return }
        await server.shutdown(grace: .milliseconds(100))
    }

    func shutdown() async {
        await stop()
        group.shutdown()
    }

    func setMode(_ mode: Mode) { state.withLock { $0.mode = mode } }

    var calls: [Call] { state.withLock { $0.calls } }

    func calls(event: String) -> [Call] { calls.filter { $0.event == event } }

    /// Calls answered 2xx.
    func delivered(event: String) -> [Call] { calls(event: event).filter { (200...299).contains($0.status) } }

    /// Open connections to the receiver now (from its server's own gauge).
    var openConnections: Int? {
        for line in metrics.render().split(separator: "\n") where line.hasPrefix("parley_http_open_connections ") {
            return Int(line.split(separator: " ").last ?? "")
        }
        return nil
    }

    private func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        for name in [
            "x-app-key", "x-timestamp", "x-nonce", "x-signature", "x-parley-event", "x-parley-idempotency-key",
            "content-type",
        ] {
            headers[name] = request.headers[name]
        }
        let target = request.head.path + (request.head.query.map { "?" + $0 } ?? "")
        var call = Call(target: target, headers: headers, body: request.bodyBytes, status: 200)
        let answer: [UInt8]
        if call.event == "before_send" {
            answer = Array(await beforeSend(call.message["content"]).utf8)
        } else {
            if case .fail(let status) = state.withLock({ $0.mode }) { call.status = status }
            answer = Array(#"{"ok":true}"#.utf8)
        }
        let status = call.status
        state.withLock { $0.calls.append(call) }
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: answer)
    }
}

import Foundation
import ParleyHTTP
import ParleyLiveSupport
import ParleyNet
import ParleyObservability
import ParleyTestSupport
import Testing

/// The WebSocket `send` frame goes through the app backend's check (`before_send`) like REST: a refusal is an error
/// frame with 1600 and the backend's own code in its `data`, and nothing is stored.
@Suite("before_send on the WebSocket", .serialized)
struct BeforeSendFrameTests {
    @Test func aRefusedSendIsAnErrorFrameWithTheBackendsCode() async throws {
        let group = try EventLoopGroup(threads: 1)
        var router = Router()
        router.post("/hook") { _, _ in
            HTTPResponse(
                status: 200, headers: ["Content-Type": "application/json"],
                body: Array(#"{"action":"deny","code":4001,"message":"not here"}"#.utf8))
        }
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        let backend = HTTPServer(
            configuration: configuration, group: group, responder: HTTPResponder(router: router, middleware: []),
            logger: Logger(sink: LogSink(capturingAt: .error)), metrics: MetricsRegistry())
        let port = try await backend.start()
        defer { group.shutdown() }
        try await MessagingFixture.run(environment: ["PARLEY_WEBHOOK_ALLOW_PRIVATE": "1"]) { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let bob = try await fx.users(1, prefix: "bob")[0]
            // As `parley app webhook` stores it; the server hears of it through NOTIFY.
            _ = try await fx.database.query(
                """
                INSERT INTO app_webhooks (app_id, url, events) VALUES (\(fx.appId), \("http://127.0.0.1:\(port)/hook"),
                                                                       '{before_send}')
                """)
            let message: [String: Any] = ["toId": bob.userId, "chatType": "single", "msgType": "text", "content": "x"]
            var attempt = 0
            var refusal: [String: Any] = [:]
            let refused = try await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
                attempt += 1
                let reqId = "r\(attempt)"
                try await alice.socket.sendRaw(["type": "send", "reqId": reqId, "data": message])
                let frame = try await alice.socket.next(timeout: .seconds(10)) { $0["reqId"] as? String == reqId }
                refusal = frame["data"] as? [String: Any] ?? [:]
                return frame["type"] as? String == "error"
            }
            #expect(refused != nil)
            #expect(refusal["code"] as? Int == 1600)
            #expect(refusal["message"] as? String == "not here")
            let details = refusal["data"] as? [String: Any]
            #expect(details?["backendCode"] as? Int == 4001)
            // Sends stored before the server learned of the hook, none after.
            #expect(try await fx.messageCount() == attempt - 1)
        }
        await backend.shutdown(grace: .milliseconds(100))
    }
}

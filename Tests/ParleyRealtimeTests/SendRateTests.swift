import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// The send rate per user: REST and the WebSocket draw on one bucket; past it, REST answers 429 + Retry-After and
/// the WebSocket an error frame with the same code and `retryAfter`. The rate is tiny, so no refill can happen
/// while the test runs.
@Suite("Send rate", .serialized)
struct SendRateTests {
    static let environment = ["PARLEY_IM_SEND_RATE_PER_SECOND": "0.001", "PARLEY_IM_SEND_BURST": "3"]

    @Test func sendsPastTheRateAnswer1118OnRESTAndTheWebSocket() async throws {
        try await MessagingFixture.run(environment: Self.environment) { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let bob = try await fx.users(1, prefix: "bob")[0]
            try await fx.sendOK(alice.session, to: bob.userId)
            try await fx.sendOK(alice.session, to: bob.userId)
            let message: [String: Any] = ["toId": bob.userId, "chatType": "single", "msgType": "text", "content": "hi"]
            _ = try await alice.socket.request("send", message)

            let refused = try await fx.send(alice.session, to: bob.userId)
            #expect(refused.status == 429)
            #expect(refused.code == 1118)
            let retryAfter = try #require(refused.header("Retry-After").flatMap(Int.init))
            #expect((1...1000).contains(retryAfter))

            try await alice.socket.sendRaw(["type": "send", "reqId": "over", "data": message])
            let frame = try await alice.socket.next(timeout: .seconds(10)) { $0["reqId"] as? String == "over" }
            #expect(frame["type"] as? String == "error")
            let data = try #require(frame["data"] as? [String: Any])
            #expect(data["code"] as? Int == 1118)
            #expect(((data["retryAfter"] as? Int) ?? 0) >= 1)
            // The connection stays, and requests other than sends still work.
            _ = try await alice.socket.request("ping")

            // Other users have buckets of their own; nothing refused was stored.
            try await fx.sendOK(bob, to: alice.session.userId)
            #expect(try await fx.messageCount() == 4)
            #expect(fx.live.app.metrics.render().contains(#"parley_quota_refusals_total{kind="send_rate"} 2"#))
        }
    }
}

import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import ParleyWebhooks
import Testing

@Suite(.serialized) struct BeforeSendTests {
    /// The backend: refuses "deny me", masks "replace me", takes longer than any timeout for "slow", else allows.
    static let backend: WebhookReceiver.BeforeSendRule = { content in
        switch content as? String {
        case "deny me": return #"{"action":"deny","code":4001,"message":"no swearing here"}"#
        case "replace me": return #"{"action":"allow","content":"r****e me","extra":{"filtered":true}}"#
        case "replace badly": return #"{"action":"allow","content":{"not":"text"}}"#
        case "slow":
            try? await Task.sleep(for: .seconds(3))
            return #"{"action":"allow"}"#
        default: return #"{"action":"allow"}"#
        }
    }

    @Test func denyReplaceAndTimeoutFollowTheBackendAndThePolicy() async throws {
        try await WebhookFixture.run(beforeSend: Self.backend) { fixture in
            let users = try await fixture.messaging.users(2)
            let peer = users[1].userId
            // No webhook: nothing is called.
            _ = try await fixture.messaging.sendOK(users[0], to: peer, content: "deny me")
            #expect(fixture.receiver.calls.isEmpty)

            try await fixture.configure([.beforeSend], timeoutMilliseconds: 300, onFailure: .allow)
            let denied = try await fixture.messaging.send(users[0], to: peer, content: "deny me")
            #expect(denied.status == 403)
            #expect(denied.code == 1600)
            #expect(denied.message == "no swearing here")
            #expect(denied.data["backendCode"] as? Int == 4001)
            #expect(denied.data["backendMessage"] as? String == "no swearing here")
            let call = try #require(fixture.receiver.calls(event: "before_send").last)
            #expect(call.message["fromId"] as? String == users[0].userId)
            #expect(call.message["toId"] as? String == peer)
            #expect(call.headers["x-parley-idempotency-key"] == call.eventId)

            let replaced = try await fixture.messaging.sendOK(users[0], to: peer, content: "replace me")
            #expect(replaced["content"] as? String == "r****e me")
            #expect(replaced["extra"] as? String == #"{"filtered":true}"#)
            // A replacement is validated like a client's content: a text message's content must be a string.
            let bad = try await fixture.messaging.send(users[0], to: peer, content: "replace badly")
            #expect(bad.status == 400)

            // Timeout with on_failure allow: stored as sent.
            let slowAllowed = try await fixture.messaging.sendOK(users[0], to: peer, content: "slow")
            #expect(slowAllowed["content"] as? String == "slow")

            try await fixture.configure([.beforeSend], timeoutMilliseconds: 300, onFailure: .deny)
            let slowDenied = try await fixture.messaging.send(users[0], to: peer, content: "slow")
            #expect(slowDenied.status == 503)
            #expect(slowDenied.code == 1601)

            // A backend that is down, with on_failure deny: refused; nothing refused was stored.
            await fixture.receiver.stop()
            let down = try await fixture.messaging.send(users[0], to: peer, content: "fine")
            #expect(down.code == 1601)
            let history = try await fixture.messaging.history(
                users[0], replaced["conversationId"] as! String)
            let contents = (history.data["messages"] as? [[String: Any]] ?? []).compactMap { $0["content"] as? String }
            #expect(Set(contents) == ["deny me", "r****e me", "slow"])
            try await fixture.receiver.start()
        }
    }
}

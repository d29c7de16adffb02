import Foundation
import ParleyLiveSupport
import Testing

/// Seed 001's client over the WebSocket: `send` without a clientMsgId and with content as a string; every `ack`,
/// `message` and `edit` frame decodes into its `ImMessage`; revoke by clientMsgId, and its refusals.
@Suite("Seed frames", .serialized)
struct SeedFrameTests {
    @Test func everyMessageFrameDecodesIntoTheSeedsImMessage() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let bob = try await GatewayTests.device(fx, username: "bob")
            let key = try await fx.uploadKey(alice.session)
            let document = #"{"objectKey":"\#(key)","width":16,"height":9}"#
            let ack = try await alice.socket.request(
                "send",
                ["toId": bob.session.userId, "chatType": "single", "msgType": "image", "content": document])
            let sent = try SeedImMessage.decode(ack)
            #expect(sent.content == document && ack["clientMsgId"] is NSNull)
            let frame = try await bob.socket.next("message") {
                ($0["data"] as? [String: Any])?["id"] as? String == sent.id
            }
            #expect(try SeedImMessage.decode(frame["data"]).content == document)

            let text = try SeedImMessage.decode(
                try await alice.socket.request(
                    "send",
                    [
                        "toId": bob.session.userId, "chatType": "single", "msgType": "text", "content": "tpyo",
                        "extra": ["mention": [bob.session.userId]], "clientMsgId": "c-typo",
                    ]))
            #expect(text.extra == #"{"mention":["\#(bob.session.userId)"]}"#)
            let editAck = try SeedImMessage.decode(
                try await alice.socket.request("edit", ["msgId": text.id, "content": "typo"]))
            let edit = try await bob.socket.next("edit") { ($0["data"] as? [String: Any])?["id"] as? String == text.id }
            let edited = try SeedImMessage.decode(edit["data"])
            #expect(edited.content == "typo" && edited.editedAt != nil && edited.editedAt == editAck.editedAt)

            // Revoke by clientMsgId: unknown and another user's answer 1102, a malformed frame 1002.
            let conversationId = MessagingFixture.singleID(alice.session, bob.session)
            for (device, clientMsgId) in [(alice, "c-unknown"), (bob, "c-typo")] {
                do {
                    _ = try await device.socket.request(
                        "revoke", ["conversationId": conversationId, "clientMsgId": clientMsgId])
                    Issue.record("revoked by \(clientMsgId)")
                } catch let error as IMTestError {
                    #expect(error.code == 1102)
                }
            }
            do {
                _ = try await alice.socket.request("revoke", ["clientMsgId": "c-typo"])
                Issue.record("a revoke without conversationId was accepted")
            } catch let error as IMTestError {
                #expect(error.code == 1002 && error.message.contains("conversationId"))
            }
            let revoked = try SeedImMessage.decode(
                try await alice.socket.request(
                    "revoke", ["conversationId": conversationId, "clientMsgId": "c-typo"]))
            #expect(revoked.id == text.id && revoked.revoked && revoked.content == "")
            _ = try await bob.socket.next("revoke") { ($0["data"] as? [String: Any])?["msgId"] as? String == text.id }
        }
    }
}

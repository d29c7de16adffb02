import Foundation
import ParleyJSON
import Testing

@testable import ParleyMessaging
@testable import ParleyRealtime

/// The hand-written descriptor of a stored message says byte for byte what the general one says.
struct RelayDescriptorTests {
    private func message(id: String, conversation: String) -> IMMessage {
        IMMessage(
            id: id, conversationId: conversation, seq: 7, fromId: "a", toId: "b", chatType: .single,
            msgType: .text, content: .object(JSONObject([("text", .string("hi"))])), extra: nil,
            clientMsgId: "c-1", revoked: false, revokedBy: nil, createdAt: Date(timeIntervalSince1970: 0),
            editedAt: nil)
    }

    @Test(arguments: [
        (nil as String?, false), ("session-1", false), (nil, true), ("s\"with\\quotes", true),
    ])
    func messageDescriptorsMatchTheGeneralForm(origin: String?, membershipChanged: Bool) {
        var event = MessagingEvent(
            appId: 42, conversationId: "si:a:b\u{1}", audience: .conversationMembers,
            originSessionId: origin, payload: .message(message(id: "123", conversation: "si:a:b")))
        event.membershipChanged = membershipChanged
        #expect(RelayDescriptor.describeSerialized(event) == RelayDescriptor.describe(event).serialized())
    }

    @Test func otherEventsTakeTheGeneralForm() {
        let read = MessagingEvent(
            appId: 1, conversationId: "si:a:b", audience: .user("a"), originSessionId: "s",
            payload: .read(conversationId: "si:a:b", userId: "a", seq: 3))
        #expect(RelayDescriptor.describeSerialized(read) == RelayDescriptor.describe(read).serialized())
        let leaving = MessagingEvent(
            appId: 1, conversationId: "sg:g", audience: .conversationMembersAnd(["x"]),
            originSessionId: nil, payload: .message(message(id: "9", conversation: "sg:g")))
        #expect(RelayDescriptor.describeSerialized(leaving) == RelayDescriptor.describe(leaving).serialized())
    }
}

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
            origin: origin, payload: .message(message(id: "123", conversation: "si:a:b")))
        event.membershipChanged = membershipChanged
        #expect(RelayDescriptor.describeSerialized(event) == RelayDescriptor.describe(event).serialized())
    }

    @Test func otherEventsTakeTheGeneralForm() {
        let read = MessagingEvent(
            appId: 1, conversationId: "si:a:b", audience: .user("a"), origin: "s",
            payload: .read(conversationId: "si:a:b", userId: "a", seq: 3))
        #expect(RelayDescriptor.describeSerialized(read) == RelayDescriptor.describe(read).serialized())
        let leaving = MessagingEvent(
            appId: 1, conversationId: "sg:g", audience: .conversationMembersAnd(["x"]),
            origin: nil, payload: .message(message(id: "9", conversation: "sg:g")))
        #expect(RelayDescriptor.describeSerialized(leaving) == RelayDescriptor.describe(leaving).serialized())
    }

    /// A user event for thousands of users (a profile change to every friend) goes out in descriptors under the
    /// NOTIFY limit that together name every recipient once, each carrying the whole event.
    @Test func userEventsSplitTheirAudienceUnderThePayloadLimit() throws {
        let users = (0..<5000).map { "user_\($0)_" + String(repeating: "x", count: $0 % 40) }
        let data = JSONValue.object(
            JSONObject([("id", .string("me")), ("signature", .string(String(repeating: "s", count: 3000)))]))
        let event = MessagingEvent(
            appId: 7, conversationId: "", audience: .users(users), origin: "origin",
            payload: .userEvent(.profile, data))
        let parts = RelayDescriptor.describeUserEvent(event)
        #expect(parts.count > 1)
        var named: [String] = []
        for part in parts {
            #expect(part.count <= PostgresRelay.maxPayloadBytes)
            let object = try #require(try JSONValue.parse(part).objectValue)
            let delivery = try #require(RelayDescriptor.delivery(object, messages: [:]))
            guard case .users(let recipients) = delivery.audience else {
                Issue.record("audience \(delivery.audience)")
                return
            }
            named += recipients
            #expect(delivery.origin == "origin" && delivery.appId == 7)
            #expect(delivery.frame == Delivery.frame(for: .userEvent(.profile, data)))
        }
        #expect(named == users)
        // A small audience stays one descriptor.
        var small = event
        small.audience = .users(["a", "b"])
        #expect(RelayDescriptor.describeUserEvent(small) == [RelayDescriptor.describe(small).serialized()])
    }

    /// A conversation event (reactions, pins) travels inline and comes out as the same frame for the same members.
    @Test(arguments: ConversationEventKind.allCases)
    func conversationEventsTravelInline(kind: ConversationEventKind) throws {
        let data = JSONValue.object(JSONObject([("msgId", .string("17")), ("emoji", .string("👍"))]))
        let event = MessagingEvent(
            appId: 3, conversationId: "sg:g1", audience: .conversationMembers, origin: "s-1",
            payload: .conversationEvent(kind, data))
        let serialized = RelayDescriptor.describeSerialized(event)
        #expect(serialized == RelayDescriptor.describe(event).serialized())
        let object = try #require(try JSONValue.parse(serialized).objectValue)
        let delivery = try #require(RelayDescriptor.delivery(object, messages: [:]))
        #expect(delivery.appId == 3 && delivery.conversationId == "sg:g1" && delivery.origin == "s-1")
        #expect(delivery.audience == .conversationMembers && !delivery.touchesSummary)
        #expect(delivery.frame == Delivery.frame(for: .conversationEvent(kind, data)))
        // The encoded WebSocket frame carries the kind as its type.
        let text = String(decoding: delivery.frame, as: UTF8.self)
        #expect(text.contains(#"{"type":"\#(kind.rawValue)","data":{"msgId":"17""#))
    }
}

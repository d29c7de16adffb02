import Foundation
import ParleyLiveSupport
import Testing

/// OpenIM's `onConversationChanged` (seed 000): a message, read or revoke brings each connected member a
/// `conversation` event with their summary as it is now.
@Suite("Conversation events", .serialized)
struct ConversationEventTests {
    typealias Device = GatewayTests.Device

    static func data(_ frame: [String: Any]) -> [String: Any] { frame["data"] as? [String: Any] ?? [:] }

    static func summary(
        _ device: Device, _ conversationId: String, where predicate: @escaping @Sendable ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        data(
            try await device.socket.next("conversation") { frame in
                let summary = data(frame)
                return summary["conversationId"] as? String == conversationId && predicate(summary)
            })
    }

    @Test func messagesReadsAndRevokesUpdateEachMembersSummary() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let aliceWeb = try await GatewayTests.device(fx, username: "alice", platform: "web", register: false)
            let bob = try await GatewayTests.device(fx, username: "bob")
            var ids: [String] = []
            for text in ["one", "two"] {
                let sent = try await alice.socket.request(
                    "send", ["toId": bob.session.userId, "chatType": "single", "msgType": "text", "content": text])
                ids.append(try #require(sent["id"] as? String))
            }
            let conversationId = MessagingFixture.singleID(alice.session, bob.session)
            // The recipient: two unread, the second message as latestMessage, in the seed's own ImMessage shape.
            let atBob = try await Self.summary(bob, conversationId) { $0["unreadCount"] as? Int == 2 }
            let latest = try SeedImMessage.decode(atBob["latestMessage"])
            #expect(latest.id == ids[1] && latest.content == "two")
            #expect(atBob["peerReadSeq"] as? Int == 2 && atBob["lastMessagePreview"] as? String == "two")
            // The sender's other device (and the sending one): nothing unread, the same latest message.
            let second = ids[1]
            for device in [aliceWeb, alice] {
                let own = try await Self.summary(device, conversationId) {
                    ($0["latestMessage"] as? [String: Any])?["id"] as? String == second
                }
                #expect(own["unreadCount"] as? Int == 0 && own["peerReadSeq"] as? Int == 0)
            }

            // A read: the reader's unread count drops, the peer learns the read point (per-message isRead).
            _ = try await bob.socket.request("read", ["conversationId": conversationId, "seq": 2])
            let afterRead = try await Self.summary(aliceWeb, conversationId) { $0["peerReadSeq"] as? Int == 2 }
            #expect(afterRead["unreadCount"] as? Int == 0)
            #expect(try await fx.conversation(bob.session, conversationId)?["unreadCount"] as? Int == 0)

            // A revoke: the latest message goes out revoked, content "".
            _ = try await alice.socket.request("revoke", ["msgId": ids[1]])
            let revoked = try await Self.summary(bob, conversationId) {
                ($0["latestMessage"] as? [String: Any])?["revoked"] as? Bool == true
            }
            #expect(try SeedImMessage.decode(revoked["latestMessage"]).content == "")
            #expect(revoked["lastMessagePreview"] as? String == "message revoked")
        }
    }

    /// A group message reads every online member's summary in one statement, not one per member.
    @Test func aGroupMessageCostsOneStatementForAllMembers() async throws {
        try await MessagingFixture.run { fx in
            var devices: [Device] = []
            for index in 0..<8 { devices.append(try await GatewayTests.device(fx, username: "member\(index)")) }
            let group = try await fx.createGroup(devices[0].session, members: devices.dropFirst().map(\.session))
            // The creation notice brings its own summaries: wait until every member has it.
            for device in devices {
                _ = try await Self.summary(device, group.conversationId) { $0["lastSeq"] as? Int == 1 }
            }
            let before = try await Self.statements(fx)
            try await fx.sendOK(devices[1].session, to: group.groupId, chatType: "group", content: "hello all")
            for device in devices.dropFirst(2) + [devices[0]] {
                let summary = try await Self.summary(device, group.conversationId) { $0["lastSeq"] as? Int == 2 }
                #expect(summary["unreadCount"] as? Int == 1 && summary["peerReadSeq"] == nil)
                #expect(try SeedImMessage.decode(summary["latestMessage"]).content == "hello all")
            }
            let sender = try await Self.summary(devices[1], group.conversationId) { $0["lastSeq"] as? Int == 2 }
            #expect(sender["unreadCount"] as? Int == 0)
            let statements = try await Self.statements(fx) - before
            #expect(statements >= 1 && statements < 4, "\(statements) statements for 8 members")
        }
    }

    static func statements(_ fx: MessagingFixture) async throws -> Int {
        let text = try await fx.client.get("/metrics").text
        let line = text.split(separator: "\n").first {
            $0.hasPrefix("parley_realtime_conversation_summary_queries_total")
        }
        return Int(Double(line?.split(separator: " ").last ?? "0") ?? 0)
    }
}

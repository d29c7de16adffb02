import Foundation
import ParleyLiveSupport
import ParleyPostgres
import Testing

/// Who may revoke and edit, when; revoked content is gone from the row itself.
@Suite("Revoke and edit", .serialized)
struct RevokeAndEditTests {
    func age(_ fx: MessagingFixture, _ id: String, minutes: Int) async throws {
        _ = try await fx.database.query(
            """
            UPDATE messages SET created_at = now() - \(minutes) * interval '1 minute' WHERE id = \(Int64(id)!)
            """)
    }

    func revoke(_ fx: MessagingFixture, _ session: Session, _ id: String) async throws -> TestResponse {
        try await fx.client.post("/api/im/messages/\(id)/revoke", token: session.accessToken)
    }

    @Test func revokeRules() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(4)
            let (owner, admin, member, stranger) = (users[0], users[1], users[2], users[3])
            let group = try await fx.createGroup(owner, members: [admin, member])
            #expect(
                try await fx.client.patch(
                    "/api/im/groups/\(group.groupId)/members/\(admin.userId)",
                    json: ["role": "admin"], token: owner.accessToken
                ).status == 200)

            // The sender, within the window: content and extra wiped in the row itself.
            let fresh = try await fx.send(
                member, to: group.groupId, chatType: "group", content: "secret plan",
                extra: ["k": "v"])
            let freshID = try #require(fresh.data["id"] as? String)
            let revoked = try await revoke(fx, member, freshID)
            #expect(revoked.status == 200)
            #expect(revoked.data["revoked"] as? Bool == true)
            #expect(revoked.data["content"] as? String == "")
            #expect(revoked.data["revokedBy"] as? String == member.userId)
            let row = try await fx.database.query(
                """
                SELECT content, extra, revoked_at IS NOT NULL AS revoked, seq, from_id FROM messages WHERE id = \(Int64(freshID)!)
                """)[0]
            #expect(row.isNull("content") && row.isNull("extra"))
            #expect(try row.decode("revoked", as: Bool.self))
            #expect(try row.decode("from_id", as: String.self) == member.userId)
            // History shows it revoked, without content, in place.
            let history = try await fx.history(owner, group.conversationId)
            let shown = (history.data["messages"] as? [[String: Any]])?.first { $0["id"] as? String == freshID }
            #expect(shown?["revoked"] as? Bool == true)
            #expect(shown?["content"] as? String == "")

            // Revoking twice: success again, and no second revoke change.
            #expect(try await revoke(fx, member, freshID).status == 200)
            let changes = try await fx.database.query(
                """
                SELECT count(*) AS n FROM changes WHERE kind = 'revoke' AND message_id = \(Int64(freshID)!)
                """)[0].decode("n", as: Int.self)
            #expect(changes == 1)

            // The sender, after the window (default 2 minutes): refused.
            let old = try await fx.sendOK(member, to: group.groupId, chatType: "group", content: "old")
            let oldID = old["id"] as! String
            try await age(fx, oldID, minutes: 3)
            let late = try await revoke(fx, member, oldID)
            #expect(late.status == 403)
            #expect(late.code == 1106)
            // Another plain member: refused at any age.
            let other = try await fx.sendOK(admin, to: group.groupId, chatType: "group", content: "admin's")
            let byMember = try await revoke(fx, member, other["id"] as! String)
            #expect(byMember.code == 1105)
            // An admin and the owner: any member's message, any age.
            #expect(try await revoke(fx, admin, oldID).status == 200)
            let older = try await fx.sendOK(member, to: group.groupId, chatType: "group", content: "older")
            try await age(fx, older["id"] as! String, minutes: 60 * 24 * 30)
            #expect(try await revoke(fx, owner, older["id"] as! String).status == 200)
            // A stranger (not a member): the message is not found.
            let byStranger = try await revoke(fx, stranger, other["id"] as! String)
            #expect(byStranger.status == 404)
            #expect(byStranger.code == 1102)
            // Notify messages cannot be revoked.
            let notify = try await fx.database.query(
                """
                SELECT id FROM messages WHERE msg_type = 'notify' LIMIT 1
                """)[0].decode("id", as: Int64.self)
            #expect(try await revoke(fx, owner, String(notify)).code == 1105)

            // 1:1: the peer may not revoke the sender's message.
            let direct = try await fx.sendOK(owner, to: stranger.userId, content: "dm")
            #expect(try await revoke(fx, stranger, direct["id"] as! String).code == 1105)
            #expect(try await revoke(fx, owner, direct["id"] as! String).status == 200)
        }
    }

    @Test func appRevokeWindowOverridesTheDefault() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let message = try await fx.sendOK(users[0], to: users[1].userId)
            let id = message["id"] as! String
            try await age(fx, id, minutes: 5)
            #expect(try await revoke(fx, users[0], id).code == 1106)
            // Ten minutes for this app, as `parley app update --revoke-window 600` sets it.
            let updated = try await fx.live.auth.appRepository.update(appKey: fx.appKey, revokeWindowSeconds: 600)
            fx.live.auth.directory.upsert(try #require(updated))
            #expect(try await revoke(fx, users[0], id).status == 200)
        }
    }

    @Test func editRules() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let text = try await fx.sendOK(alice, to: bob.userId, content: "helo")
            let id = text["id"] as! String
            let edited = try await fx.client.patch(
                "/api/im/messages/\(id)", json: ["content": "hello"], token: alice.accessToken)
            #expect(edited.status == 200)
            #expect(edited.data["content"] as? String == "hello")
            #expect(edited.data["editedAt"] is Int)
            #expect(edited.data["seq"] as? Int == text["seq"] as? Int)
            // Not the sender.
            #expect(
                try await fx.client.patch("/api/im/messages/\(id)", json: ["content": "x"], token: bob.accessToken).code
                    == 1107)
            // Not text.
            let image = try await fx.sendOK(
                alice, to: bob.userId, msgType: "image",
                content: ["objectKey": try await fx.uploadKey(alice), "width": 10, "height": 10])
            #expect(
                try await fx.client.patch(
                    "/api/im/messages/\(image["id"] as! String)", json: ["content": "x"],
                    token: alice.accessToken
                ).code == 1107)
            // Invalid new content: 1002, nothing changed.
            let empty = try await fx.client.patch(
                "/api/im/messages/\(id)", json: ["content": ""], token: alice.accessToken)
            #expect(empty.code == 1002)
            // Out of the window (24 h).
            try await age(fx, id, minutes: 25 * 60)
            #expect(
                try await fx.client.patch("/api/im/messages/\(id)", json: ["content": "late"], token: alice.accessToken)
                    .code == 1108)
            let stored = try await fx.database.query("SELECT content FROM messages WHERE id = \(Int64(id)!)")[0]
            #expect(try stored.decode("content", as: String.self) == "\"hello\"")
            // Revoked messages cannot be edited.
            let gone = try await fx.sendOK(alice, to: bob.userId, content: "oops")
            #expect(try await revoke(fx, alice, gone["id"] as! String).status == 200)
            #expect(
                try await fx.client.patch(
                    "/api/im/messages/\(gone["id"] as! String)", json: ["content": "x"],
                    token: alice.accessToken
                ).code == 1115)
        }
    }
}

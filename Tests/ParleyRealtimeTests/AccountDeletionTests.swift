import Foundation
import ParleyAuth
import ParleyLiveSupport
import ParleyMessaging
import ParleyPostgres
import ParleyTestSupport
import ParleyWebSocket
import Testing

/// `DELETE /api/users/me` (issue 19; Apple 5.1.1(v)): one transaction ends the sessions, unbinds push tokens, ends
/// friendships, blocks and requests, leaves every group and anonymises the profile; logins then answer 1048.
@Suite("Account deletion", .serialized)
struct AccountDeletionTests {
    static func deleteAccount(_ fx: MessagingFixture, _ session: Session, password: String? = "correct horse")
        async throws -> TestResponse
    {
        var json: [String: Any] = [:]
        if let password { json["password"] = password }
        return try await fx.client.send(
            "DELETE", "/api/users/me",
            headers: ["Authorization": "Bearer \(session.accessToken)", "Content-Type": "application/json"],
            body: Array(try JSONSerialization.data(withJSONObject: json)))
    }

    static func count(_ fx: MessagingFixture, _ sql: String) async throws -> Int {
        try await fx.database.query(PostgresQuery(unsafeSQL: sql))[0].decode(0, as: Int.self)
    }

    /// Makes two users friends the way the social feature stores it (one row per side).
    static func befriend(_ fx: MessagingFixture, _ a: Session, _ b: Session) async throws {
        _ = try await fx.database.query(
            """
            INSERT INTO friendships (app_id, user_id, friend_id) VALUES
                (\(fx.appId), \(a.userId), \(b.userId)), (\(fx.appId), \(b.userId), \(a.userId))
            """)
    }

    @Test func theRouteChecksThePasswordAndRefusesAccountsOfTheAppsBackend() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await fx.users(1, prefix: "alice")[0]
            let wrong = try await Self.deleteAccount(fx, alice, password: "wrong password")
            #expect(wrong.status == 401)
            #expect(wrong.code == 1035)
            // The wrong password counted as a failed login of the account, from this address.
            #expect(
                try await Self.count(
                    fx, "SELECT coalesce(sum(failures), 0)::int FROM login_throttles WHERE username = 'alice0'") == 2)
            let missing = try await Self.deleteAccount(fx, alice, password: nil)
            #expect(missing.status == 400)
            #expect(missing.code == 1002)
            #expect(try await fx.client.get("/api/users/me", token: alice.accessToken).status == 200)

            // An account the app's backend created has no password here: its backend deletes it.
            let external = try Session(
                try await fx.live.signedLogin(
                    appKey: fx.appKey, secret: fx.secret, ["appKey": fx.appKey, "userId": "ext_1", "platform": "ios"]))
            let refused = try await Self.deleteAccount(fx, external, password: "anything at all")
            #expect(refused.status == 403)
            #expect(refused.code == 1047)
            #expect(try await fx.client.get("/api/users/me", token: external.accessToken).status == 200)

            // The right password deletes: the token is dead, logins answer 1048, and so does the route again.
            let deleted = try await Self.deleteAccount(fx, alice)
            #expect(deleted.status == 200, "\(deleted.text)")
            #expect(try await fx.client.get("/api/users/me", token: alice.accessToken).code == 1034)
            #expect(try await Self.deleteAccount(fx, alice).code == 1034)
            let login = try await fx.client.login(appKey: fx.appKey, username: "alice0")
            #expect(login.status == 403)
            #expect(login.code == 1048)
            #expect(
                try await fx.client.login(appKey: fx.appKey, username: "alice0", password: "other one").code == 1048)
            // Its username stays reserved during the grace period.
            #expect(try await fx.client.register(appKey: fx.appKey, username: "alice0").code == 1040)

            // A deleted account of the app's backend is not re-created by a signed login with its id.
            #expect(
                try await fx.live.app.accountDeletion.delete(appId: fx.appId, userId: "ext_1")
                    == .deleted(endedSessions: 1))
            let again = try await fx.live.signedLogin(
                appKey: fx.appKey, secret: fx.secret, ["appKey": fx.appKey, "userId": "ext_1", "platform": "ios"])
            #expect(again.status == 403)
            #expect(again.code == 1048)
        }
    }

    @Test func deletionEndsSocketsPushTokensFriendshipsAndAnonymisesTheProfile() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(4)
            let (alice, bob, carol, dave) = (users[0], users[1], users[2], users[3])
            let aliceSocket = try await IMTestClient.connect(port: fx.live.port, token: alice.imToken)
            let bobSocket = try await IMTestClient.connect(port: fx.live.port, token: bob.imToken)
            _ = try await fx.sendOK(alice, to: bob.userId, content: "hello before I go")
            let bobCursor = try await fx.syncAll(bob, from: try await fx.sync(bob, cursor: nil).cursor).cursor
            let carolCursor = try await fx.sync(carol, cursor: nil).cursor
            let daveCursor = try await fx.sync(dave, cursor: nil).cursor
            try await Self.befriend(fx, alice, bob)
            try await Self.befriend(fx, alice, carol)
            _ = try await fx.database.query(
                """
                INSERT INTO user_blocks (app_id, blocker_id, blocked_id) VALUES
                    (\(fx.appId), \(alice.userId), \(dave.userId)), (\(fx.appId), \(dave.userId), \(alice.userId));
                """)
            let requests = try await fx.database.query(
                """
                INSERT INTO friend_requests (app_id, from_id, to_id) VALUES
                    (\(fx.appId), \(alice.userId), \(dave.userId)), (\(fx.appId), \(dave.userId), \(bob.userId))
                RETURNING id
                """)
            let withdrawnId = try requests[0].decode(0, as: Int64.self)
            _ = try await fx.database.query(
                """
                INSERT INTO push_tokens (app_id, vendor, token, user_id, session_id)
                VALUES (\(fx.appId), 'apns', 'aa11', \(alice.userId), \(alice.sessionId)),
                       (\(fx.appId), 'apns', 'bb22', \(bob.userId), \(bob.sessionId))
                """)

            #expect(try await Self.deleteAccount(fx, alice).status == 200)

            // Her socket hears why and closes with 4501; Bob hears the friendship end, live and through sync.
            let ended = try await aliceSocket.next("session_ended")
            #expect((ended["data"] as? [String: Any])?["reason"] as? String == "deleted")
            #expect(try await aliceSocket.waitForClose() == WebSocketCloseCode(4501))
            #expect(aliceSocket.closeReason == "account deleted")
            let removed = try await bobSocket.next("friend_removed")
            #expect((removed["data"] as? [String: Any])?["userId"] as? String == alice.userId)
            let synced = try await fx.syncUntil(bob, from: bobCursor) { changes in
                changes.contains { $0["type"] as? String == "friend_removed" }
            }.changes
            #expect(
                synced.contains { $0["type"] as? String == "friend_removed" && $0["userId"] as? String == alice.userId }
            )
            let carolSync = try await fx.syncUntil(carol, from: carolCursor) { changes in
                changes.contains { $0["type"] as? String == "friend_removed" }
            }.changes
            #expect(carolSync.contains { $0["type"] as? String == "friend_removed" })
            // Dave's pending request from Alice is withdrawn (he is told); the one he sent Bob is untouched.
            let daveSync = try await fx.syncUntil(dave, from: daveCursor) { changes in
                changes.contains { $0["type"] as? String == "friend_request_withdrawn" }
            }.changes
            let withdrawn = try #require(daveSync.first { $0["type"] as? String == "friend_request_withdrawn" })
            #expect(withdrawn["id"] as? String == String(withdrawnId))
            #expect(withdrawn["fromId"] as? String == alice.userId)
            #expect(withdrawn["toId"] as? String == dave.userId)
            #expect(try await Self.count(fx, "SELECT count(*)::int FROM friend_requests WHERE status = 'pending'") == 1)

            // Friendships are tombstones on both sides; blocks either way are gone; only Bob's push token is left.
            #expect(
                try await Self.count(
                    fx,
                    "SELECT count(*)::int FROM friendships WHERE NOT active AND '\(alice.userId)' IN (user_id, friend_id)"
                )
                    == 4)
            #expect(try await Self.count(fx, "SELECT count(*)::int FROM friendships WHERE active") == 0)
            #expect(try await Self.count(fx, "SELECT count(*)::int FROM user_blocks") == 0)
            #expect(try await Self.count(fx, "SELECT count(*)::int FROM push_tokens") == 1)
            #expect(
                try await Self.count(fx, "SELECT count(*)::int FROM sessions WHERE end_reason = 'deleted'") == 1)

            // The profile is anonymised and says so; her message stays under her id.
            let profile = try await fx.client.get("/api/users/\(alice.userId)", token: bob.accessToken)
            #expect(profile.string("nickname") == "")
            #expect(profile.data["avatar"] is NSNull)
            #expect(profile.data["deleted"] as? Bool == true)
            #expect(
                try await fx.client.get("/api/users/\(bob.userId)", token: bob.accessToken).data["deleted"] as? Bool
                    == false)
            let history = try await fx.history(bob, MessagingFixture.singleID(alice, bob))
            let messages = history.data["messages"] as? [[String: Any]] ?? []
            #expect(messages.contains { $0["fromId"] as? String == alice.userId })
            // Nobody writes to a deleted account: as for a user that never existed, and nothing is stored.
            let stored = try await fx.messageCount()
            #expect(try await fx.send(bob, to: alice.userId, content: "are you there?").code == 1103)
            #expect(try await fx.messageCount() == stored)
            let row = try await fx.database.query(
                """
                SELECT username, password_hash IS NULL AS no_password, signature, ex IS NULL AS no_ex, searchable
                FROM users WHERE id = \(alice.userId)
                """)[0]
            #expect(try row.decode("username", as: String?.self) == "user0")
            #expect(try row.decode("no_password", as: Bool.self))
            #expect(try row.decode("signature", as: String.self) == "")
            #expect(try row.decode("no_ex", as: Bool.self))
            #expect(try !row.decode("searchable", as: Bool.self))

            // Deleting again changes nothing and does not fail.
            #expect(
                try await fx.live.app.accountDeletion.delete(appId: fx.appId, userId: alice.userId) == .alreadyDeleted)
            #expect(try await fx.live.app.accountDeletion.delete(appId: fx.appId, userId: "nobody") == .unknownUser)

            // The username is freed once the grace period has passed (the sweep, run as of 31 days later).
            #expect(try await fx.live.auth.freeDeletedUsernames(now: Date()) == 0)
            #expect(try await fx.live.auth.freeDeletedUsernames(now: Date().addingTimeInterval(31 * 86_400)) == 1)
            #expect(try await fx.client.register(appKey: fx.appKey, username: "user0").status == 200)
            // The old account stays deleted: the new one is another user.
            #expect(try await fx.client.login(appKey: fx.appKey, username: "user0").status == 200)
            bobSocket.close()
        }
    }

    @Test func aGraceOfZeroFreesTheUsernameAtOnce() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_AUTH_USERNAME_GRACE_DAYS": "0"]) { fx in
            let alice = try await fx.users(1, prefix: "alice")[0]
            #expect(try await Self.deleteAccount(fx, alice).status == 200)
            let fresh = try await fx.client.register(appKey: fx.appKey, username: "alice0")
            #expect(fresh.status == 200)
            #expect(try Session(fresh).userId != alice.userId)
        }
    }

    @Test func groupsPassToTheLongestStandingAdminElseMemberAndEmptyGroupsDissolve() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(4)
            let (alice, bob, carol, dave) = (users[0], users[1], users[2], users[3])
            // Team: Bob joined first, Carol is the admin (she inherits). Pair: Bob alone inherits. Solo: dissolves.
            let team = try await fx.createGroup(alice, name: "Team", members: [bob, carol])
            #expect(
                try await fx.client.patch(
                    "/api/im/groups/\(team.groupId)/members/\(carol.userId)", json: ["role": "admin"],
                    token: alice.accessToken
                ).status == 200)
            let pair = try await fx.createGroup(alice, name: "Pair", members: [bob])
            let solo = try await fx.createGroup(alice, name: "Solo", members: [])
            // Dave owns a group Alice is a plain member of: she just leaves it.
            let daves = try await fx.createGroup(dave, name: "Dave's", members: [alice])
            let carolSocket = try await IMTestClient.connect(port: fx.live.port, token: carol.imToken)

            #expect(try await Self.deleteAccount(fx, alice).status == 200)

            func group(_ id: String) async throws -> [String: Any] {
                let row = try await fx.database.query(
                    """
                    SELECT owner_id, member_count, dissolved_at IS NOT NULL AS dissolved FROM groups
                    WHERE app_id = \(fx.appId) AND id = \(id)
                    """)[0]
                return [
                    "owner": try row.decode("owner_id", as: String.self),
                    "members": try row.decode("member_count", as: Int.self),
                    "dissolved": try row.decode("dissolved", as: Bool.self),
                ]
            }
            #expect(try await group(team.groupId)["owner"] as? String == carol.userId)
            #expect(try await group(team.groupId)["members"] as? Int == 2)
            #expect(try await group(pair.groupId)["owner"] as? String == bob.userId)
            #expect(try await group(solo.groupId)["dissolved"] as? Bool == true)
            #expect(try await group(solo.groupId)["members"] as? Int == 0)
            #expect(try await group(daves.groupId)["owner"] as? String == dave.userId)
            #expect(try await group(daves.groupId)["members"] as? Int == 1)
            #expect(
                try await Self.count(
                    fx, "SELECT count(*)::int FROM conversation_members WHERE user_id = '\(alice.userId)'") == 0)

            // Carol sees the same notify messages as a transfer and a leave write, live.
            let transferred = try await carolSocket.next("message") { frame in
                MessagingFixture.contentObject(frame["data"])?["event"] as? String == "owner_transferred"
            }
            let content = MessagingFixture.contentObject(transferred["data"])
            #expect(content?["userId"] as? String == carol.userId)
            #expect(content?["operatorId"] as? String == alice.userId)
            _ = try await carolSocket.next("message") { frame in
                MessagingFixture.contentObject(frame["data"])?["event"] as? String == "member_left"
            }
            carolSocket.close()
        }
    }

    @Test func aFailingParticipantRollsEverythingBack() async throws {
        struct Refused: Error {}
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            try await Self.befriend(fx, alice, bob)
            let group = try await fx.createGroup(alice, name: "Team", members: [bob])
            let deletion = fx.live.auth.accountDeletion(participants: [
                fx.live.app.messaging.accountDeletionParticipant,
                AccountDeletionParticipant("refuses") { _, _, _ in throw Refused() },
            ])
            await #expect(throws: Refused.self) { try await deletion.delete(appId: fx.appId, userId: alice.userId) }

            // Nothing happened: the session, friendship, group and profile are as they were.
            #expect(try await fx.client.get("/api/users/me", token: alice.accessToken).status == 200)
            #expect(try await Self.count(fx, "SELECT count(*)::int FROM friendships WHERE active") == 2)
            #expect(
                try await Self.count(
                    fx,
                    "SELECT count(*)::int FROM groups WHERE id = '\(group.groupId)' AND owner_id = '\(alice.userId)'")
                    == 1)
            #expect(try await Self.count(fx, "SELECT count(*)::int FROM users WHERE deleted_at IS NOT NULL") == 0)
            #expect(try await Self.count(fx, "SELECT count(*)::int FROM messages WHERE msg_type = 'notify'") == 1)
            #expect(try await Self.count(fx, "SELECT count(*)::int FROM changes WHERE kind = 'friend_removed'") == 0)
        }
    }
}

import Foundation
import ParleyAuth
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import ParleyWebSocket
import Testing

/// Issue 20's admin API for users: signed server-to-server routes of the app's backend, each within the signing app.
@Suite("Admin users", .serialized)
struct AdminUsersTests {
    static func data(_ frame: [String: Any]) -> [String: Any] { frame["data"] as? [String: Any] ?? [:] }

    static func results(_ response: TestResponse) -> [[String: Any]] {
        response.data["results"] as? [[String: Any]] ?? []
    }

    /// A signed login of `userId` (the backend's users log in this way) with its socket.
    static func signedDevice(_ fx: MessagingFixture, _ userId: String, platform: String = "ios", deviceId: String = "")
        async throws -> GatewayTests.Device
    {
        let session = try Session(
            try await fx.live.signedLogin(
                appKey: fx.appKey, secret: fx.secret,
                ["appKey": fx.appKey, "userId": userId, "platform": platform, "deviceId": deviceId]))
        return GatewayTests.Device(
            session: session, socket: try await IMTestClient.connect(port: fx.live.port, token: session.imToken))
    }

    @Test func importsAHundredUsersAndReadsThemBack() async throws {
        try await MessagingFixture.run { fx in
            let users: [[String: Any]] = (0..<100).map { index in
                [
                    "userId": "imp_\(index)", "nickname": "User \(index)", "signature": "line \(index)",
                    "ex": ["level": index, "vip": index % 2 == 0],
                ]
            }
            let imported = try await fx.admin("POST", "/api/admin/users", json: ["users": users])
            #expect(imported.status == 200, "\(imported.text)")
            #expect(imported.data["created"] as? Int == 100 && imported.data["failed"] as? Int == 0)
            #expect(Self.results(imported).map { $0["userId"] as? String } == (0..<100).map { "imp_\($0)" })
            #expect(Self.results(imported).allSatisfy { $0["status"] as? String == "created" })

            let read = try await fx.admin("GET", "/api/admin/users/imp_42")
            #expect(read.status == 200, "\(read.text)")
            #expect(read.string("nickname") == "User 42" && read.string("signature") == "line 42")
            #expect((read.data["ex"] as? [String: Any])?["level"] as? Int == 42)
            #expect(read.data["managedByApp"] as? Bool == true && read.data["banned"] as? Bool == false)
            #expect(read.data["deleted"] as? Bool == false && read.data["username"] is NSNull)
            #expect((read.data["sessions"] as? [Any])?.isEmpty == true && read.data["lastActiveAt"] is NSNull)
            #expect(read.string("createdAt") != nil)

            // An upsert: known users are updated (absent fields stay), new ones created, in the order sent.
            let again = try await fx.admin(
                "POST", "/api/admin/users",
                json: ["users": [["userId": "imp_1", "nickname": "Renamed"], ["userId": "new_1"]]])
            #expect(Self.results(again).map { $0["status"] as? String } == ["updated", "created"])
            let renamed = try await fx.admin("GET", "/api/admin/users/imp_1")
            #expect(renamed.string("nickname") == "Renamed" && renamed.string("signature") == "line 1")
            // A user created without a nickname is shown under its id, as a signed login's user is.
            #expect(try await fx.admin("GET", "/api/admin/users/new_1").string("nickname") == "new_1")
            // A user listed twice is changed twice, in the order listed.
            let twice = try await fx.admin(
                "POST", "/api/admin/users",
                json: [
                    "users": [["userId": "new_2", "nickname": "First"], ["userId": "new_2", "nickname": "Second"]]
                ])
            #expect(Self.results(twice).map { $0["status"] as? String } == ["created", "updated"])
            #expect(try await fx.admin("GET", "/api/admin/users/new_2").string("nickname") == "Second")

            // Imported users are the app's own: they sign in with a signed login, and are not password accounts.
            let login = try await fx.live.signedLogin(
                appKey: fx.appKey, secret: fx.secret, ["appKey": fx.appKey, "userId": "imp_7", "platform": "ios"])
            #expect(login.status == 200, "\(login.text)")
            let signed = try Session(login)
            let me = try await fx.client.get("/api/users/me", token: signed.accessToken)
            #expect(me.string("nickname") == "User 7")
            #expect(
                try await AccountDeletionTests.deleteAccount(fx, signed, password: "anything at all").code == 1047)
            let viewed = try await fx.admin("GET", "/api/admin/users/imp_7")
            #expect((viewed.data["sessions"] as? [[String: Any]])?.first?["id"] as? String == signed.sessionId)
            #expect(viewed.string("lastActiveAt") != nil)

            // A deleted account is not brought back: that user fails alone, with the code a login would answer.
            #expect(try await fx.live.app.accountDeletion.delete(appId: fx.appId, userId: "imp_2") != .unknownUser)
            let mixed = try await fx.admin(
                "POST", "/api/admin/users",
                json: ["users": [["userId": "imp_2", "nickname": "Back"], ["userId": "imp_3", "nickname": "Three"]]])
            #expect(mixed.status == 200)
            let outcome = Self.results(mixed)
            #expect(outcome.first?["status"] as? String == "failed" && outcome.first?["code"] as? Int == 1048)
            #expect(outcome.last?["status"] as? String == "updated")
            #expect(try await fx.admin("GET", "/api/admin/users/imp_2").string("nickname") == "")
        }
    }

    @Test func badInputIsRefusedAndChangesNothing() async throws {
        try await MessagingFixture.run { fx in
            let count = { try await fx.database.query("SELECT count(*)::int FROM users")[0].decode(0, as: Int.self) }
            let tooMany: [[String: Any]] = (0..<101).map { ["userId": "u\($0)"] }
            for (body, code) in [
                (["users": tooMany], 1002), (["users": [Any]()], 1002), (["users": [["userId": "bad id!"]]], 1002),
                (["users": [["userId": "ok_2"], ["userId": "ok_3", "nickname": 5]]], 1002),
                (["users": [["userId": "ok_4", "ex": ["big": String(repeating: "x", count: 5000)]]]], 1002),
                (["users": [["userId": "ok_5"], ["userId": "system"]]], 1049),
                (["people": [["userId": "ok_6"]]], 1002),
            ] as [([String: Any], Int)] {
                let refused = try await fx.admin("POST", "/api/admin/users", json: body)
                #expect(refused.status == 400 && refused.code == code, "\(body): \(refused.text)")
            }
            #expect(try await count() == 0)
            // `system` is the sender of system messages: no signed login takes it either.
            let system = try await fx.live.signedLogin(
                appKey: fx.appKey, secret: fx.secret, ["appKey": fx.appKey, "userId": "system", "platform": "ios"])
            #expect(system.status == 400 && system.code == 1049)
            #expect(try await count() == 0)

            // Unsigned, or signed with another secret: refused before anything is read.
            let unsigned = try await fx.client.send(
                "GET", "/api/admin/users/x", headers: ["X-App-Key": fx.appKey])
            #expect(unsigned.status == 401 && unsigned.code == 1038)
            let forged = try await fx.live.adminCall(
                "POST", "/api/admin/users", appKey: fx.appKey, secret: "not the secret",
                json: ["users": [["userId": "forged"]]])
            #expect(forged.status == 401 && forged.code == 1038)

            // Unknown users, malformed ids, and another app's users: never found.
            let (other, otherSecret) = try await fx.live.createApp(name: "Other")
            let theirs = try await fx.live.adminCall(
                "POST", "/api/admin/users", appKey: other.appKey, secret: otherSecret,
                json: ["users": [["userId": "theirs", "nickname": "Not yours"]]])
            #expect(theirs.status == 200)
            for method in ["GET", "DELETE"] {
                for path in ["/api/admin/users/nobody", "/api/admin/users/theirs"] {
                    let missing = try await fx.admin(method, path)
                    #expect(missing.status == 404 && missing.code == 1050, "\(method) \(path)")
                }
            }
            for action in ["ban", "unban", "logout"] {
                let missing = try await fx.admin("POST", "/api/admin/users/theirs/\(action)")
                #expect(missing.status == 404 && missing.code == 1050, "\(action)")
            }
            let patched = try await fx.admin("PATCH", "/api/admin/users/theirs", json: ["nickname": "Mine now"])
            #expect(patched.status == 404 && patched.code == 1050)
            let badID = try await fx.admin("GET", "/api/admin/users/bad%20id")
            #expect(badID.status == 400 && badID.code == 1002)
            let stillTheirs = try await fx.live.adminCall(
                "GET", "/api/admin/users/theirs", appKey: other.appKey, secret: otherSecret)
            #expect(stillTheirs.string("nickname") == "Not yours" && stillTheirs.data["banned"] as? Bool == false)
        }
    }

    @Test func aProfileChangeByTheBackendRecordsTheProfileEvent() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await Self.signedDevice(fx, "alice")
            let friend = try await Self.signedDevice(fx, "friend")
            try await ProfileEventTests.friends(fx, alice, friend)
            let cursor = try await fx.sync(friend.session, cursor: nil).cursor

            let changed = try await fx.admin(
                "PATCH", "/api/admin/users/alice", json: ["nickname": "Alice B", "ex": ["tier": "gold"]])
            #expect(changed.status == 200, "\(changed.text)")
            #expect(changed.string("nickname") == "Alice B")
            // Live to her friend and to her own device (no session of hers made it), and in the friend's sync.
            for device in [friend, alice] {
                let profile = Self.data(try await device.socket.next("profile"))
                #expect(profile["id"] as? String == "alice" && profile["nickname"] as? String == "Alice B")
                #expect((profile["ex"] as? [String: Any])?["tier"] as? String == "gold")
            }
            let synced = try await fx.syncUntil(friend.session, from: cursor) { changes in
                changes.contains { $0["type"] as? String == "profile" }
            }.changes
            #expect(synced.contains { $0["type"] as? String == "profile" })

            // The batch import records it too, for users it updates.
            let imported = try await fx.admin(
                "POST", "/api/admin/users", json: ["users": [["userId": "alice", "signature": "imported"]]])
            #expect(Self.results(imported).first?["status"] as? String == "updated")
            let profile = Self.data(try await friend.socket.next("profile"))
            #expect(profile["signature"] as? String == "imported" && profile["nickname"] as? String == "Alice B")

            let bad = try await fx.admin("PATCH", "/api/admin/users/alice", json: ["nickname": ""])
            #expect(bad.status == 400 && bad.code == 1002)
        }
    }

    @Test func aBanClosesLiveSocketsRefusesLoginsAndUnbanRestores() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await Self.signedDevice(fx, "alice")
            let aliceWeb = try await Self.signedDevice(fx, "alice", platform: "web")
            let bob = try await Self.signedDevice(fx, "bob")

            let banned = try await fx.admin("POST", "/api/admin/users/alice/ban")
            #expect(banned.status == 200, "\(banned.text)")
            #expect(banned.data["endedSessions"] as? Int == 2 && banned.data["banned"] as? Bool == true)
            for device in [alice, aliceWeb] {
                let ended = try await device.socket.next("session_ended")
                #expect(Self.data(ended)["reason"] as? String == "banned")
                #expect(try await device.socket.waitForClose() == WebSocketCloseCode(4501))
            }
            #expect(try await fx.client.get("/api/users/me", token: alice.session.accessToken).code == 1034)
            let refused = try await fx.live.signedLogin(
                appKey: fx.appKey, secret: fx.secret, ["appKey": fx.appKey, "userId": "alice", "platform": "ios"])
            #expect(refused.status == 403 && refused.code == 1043)
            let viewed = try await fx.admin("GET", "/api/admin/users/alice")
            #expect(viewed.data["banned"] as? Bool == true && viewed.string("bannedAt") != nil)
            #expect((viewed.data["sessions"] as? [Any])?.isEmpty == true)
            // Bob is untouched; the data stays.
            #expect(try await fx.client.get("/api/users/me", token: bob.session.accessToken).status == 200)
            #expect(viewed.string("nickname") == "alice")

            let unbanned = try await fx.admin("POST", "/api/admin/users/alice/unban")
            #expect(unbanned.status == 200 && unbanned.data["banned"] as? Bool == false)
            let back = try await fx.live.signedLogin(
                appKey: fx.appKey, secret: fx.secret, ["appKey": fx.appKey, "userId": "alice", "platform": "ios"])
            #expect(back.status == 200, "\(back.text)")
            #expect(try await fx.admin("GET", "/api/admin/users/alice").data["banned"] as? Bool == false)
            bob.socket.close()
        }
    }

    @Test func forcedLogoutEndsOneSessionOrAll() async throws {
        try await MessagingFixture.run { fx in
            let phone = try await Self.signedDevice(fx, "alice", platform: "ios")
            let web = try await Self.signedDevice(fx, "alice", platform: "web")
            let desk = try await Self.signedDevice(fx, "alice", platform: "desktop")

            let one = try await fx.admin(
                "POST", "/api/admin/users/alice/logout", json: ["sessionId": web.session.sessionId])
            #expect(one.status == 200 && one.data["endedSessions"] as? Int == 1, "\(one.text)")
            let ended = try await web.socket.next("session_ended")
            #expect(Self.data(ended)["reason"] as? String == "forced_logout")
            #expect(try await web.socket.waitForClose() == WebSocketCloseCode(4501))
            #expect(try await fx.client.get("/api/users/me", token: web.session.accessToken).code == 1034)
            #expect(try await fx.client.get("/api/users/me", token: phone.session.accessToken).status == 200)
            // An ended or unknown session is not an open one of the user's.
            for sessionId in [web.session.sessionId, "s_nope1234"] {
                let missing = try await fx.admin(
                    "POST", "/api/admin/users/alice/logout", json: ["sessionId": sessionId])
                #expect(missing.status == 404 && missing.code == 1051)
            }
            #expect(
                try await fx.admin("POST", "/api/admin/users/alice/logout", json: ["sessionId": 5]).code == 1002)

            let all = try await fx.admin("POST", "/api/admin/users/alice/logout")
            #expect(all.status == 200 && all.data["endedSessions"] as? Int == 2, "\(all.text)")
            for device in [phone, desk] {
                #expect(try await device.socket.waitForClose() == WebSocketCloseCode(4501))
                #expect(try await fx.client.get("/api/users/me", token: device.session.accessToken).code == 1034)
            }
            let reasons = try await fx.database.query(
                "SELECT DISTINCT end_reason FROM sessions WHERE user_id = 'alice'")
            #expect(try reasons.map { try $0.decode(0, as: String.self) } == ["forced_logout"])
            // Not a ban: the user logs in again.
            let again = try await fx.live.signedLogin(
                appKey: fx.appKey, secret: fx.secret, ["appKey": fx.appKey, "userId": "alice", "platform": "ios"])
            #expect(again.status == 200)
        }
    }

    @Test func deletionIsTheUsersOwnDeletion() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await Self.signedDevice(fx, "alice")
            let bob = try await Self.signedDevice(fx, "bob")
            try await ProfileEventTests.friends(fx, alice, bob)
            _ = try await fx.sendOK(alice.session, to: "bob", content: "bye")

            let deleted = try await fx.admin("DELETE", "/api/admin/users/alice")
            #expect(deleted.status == 200, "\(deleted.text)")
            #expect(deleted.data["deleted"] as? Bool == true && deleted.data["endedSessions"] as? Int == 1)
            let ended = try await alice.socket.next("session_ended")
            #expect(Self.data(ended)["reason"] as? String == "deleted")
            #expect(try await alice.socket.waitForClose() == WebSocketCloseCode(4501))
            // The deletion participants ran: the friendship ended for Bob, as for a user's own deletion.
            let removed = try await bob.socket.next("friend_removed")
            #expect(Self.data(removed)["userId"] as? String == "alice")
            let profile = try await fx.client.get("/api/users/alice", token: bob.session.accessToken)
            #expect(profile.data["deleted"] as? Bool == true && profile.string("nickname") == "")
            let login = try await fx.live.signedLogin(
                appKey: fx.appKey, secret: fx.secret, ["appKey": fx.appKey, "userId": "alice", "platform": "ios"])
            #expect(login.code == 1048)

            // Again: nothing changes; the account reads as deleted and cannot be changed.
            let repeated = try await fx.admin("DELETE", "/api/admin/users/alice")
            #expect(repeated.status == 200 && repeated.data["endedSessions"] as? Int == 0)
            let viewed = try await fx.admin("GET", "/api/admin/users/alice")
            #expect(viewed.data["deleted"] as? Bool == true && viewed.string("deletedAt") != nil)
            let patched = try await fx.admin("PATCH", "/api/admin/users/alice", json: ["nickname": "Zombie"])
            #expect(patched.status == 403 && patched.code == 1048)
            bob.socket.close()
        }
    }
}

import Foundation
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyMessaging

/// The admin API's messages (issue 20): system and as-user sends, options, broadcasts and jobs, revoke, clear.
@Suite("Admin messages", .serialized)
struct AdminMessagingTests {
    static var accountConflict: [String: Any] {
        [
            "type": "account_conflict", "device_model": "iPhone 15 Pro", "text": "您的账号在另一台设备登录",
        ]
    }

    /// The content document of a wire message (a string holding JSON).
    static func document(_ message: [String: Any]?) -> [String: Any]? { MessagingFixture.contentObject(message) }

    /// Users made directly in the database (registering a thousand through the API would hash a thousand passwords).
    static func insertUsers(_ fx: MessagingFixture, _ ids: [String]) async throws {
        _ = try await fx.database.query(
            """
            INSERT INTO users (app_id, id, nickname)
            SELECT \(fx.appId), u, u FROM unnest(\(PostgresTextArray(ids))::text[]) AS u
            """)
    }

    @Test func systemCustomMessageReachesTheUserThroughSyncIntact() async throws {
        try await MessagingFixture.run { fx in
            let user = try await fx.users(1)[0]
            let start = try await fx.sync(user, cursor: nil)
            let sent = try await fx.admin(
                "POST", "/api/admin/messages",
                json: [
                    "toId": user.userId, "chatType": "single", "msgType": "custom",
                    "content": Self.accountConflict,
                ])
            #expect(sent.status == 201)
            #expect(sent.string("fromId") == "system")
            #expect(sent.string("chatType") == "single")
            #expect(sent.string("conversationId") == ConversationID.single("system", user.userId))
            let changes = try await fx.syncUntil(user, from: start.cursor) { changes in
                changes.contains { ($0["message"] as? [String: Any])?["id"] as? String == sent.string("id") }
            }.changes
            let message = try #require(
                changes.compactMap { $0["message"] as? [String: Any] }.first {
                    $0["id"] as? String == sent.string("id")
                })
            // The seed clients read customElem.data / content as JSON text and filter on `type`.
            #expect(message["msgType"] as? String == "custom")
            let document = try #require(Self.document(message))
            #expect(document["type"] as? String == "account_conflict")
            #expect(document["device_model"] as? String == "iPhone 15 Pro")
            #expect(document["text"] as? String == "您的账号在另一台设备登录")
            // A notify message from the system, and its refusals.
            let notice = try await fx.admin(
                "POST", "/api/admin/messages",
                json: ["toId": user.userId, "chatType": "single", "msgType": "notify", "content": ["event": "x"]])
            #expect(notice.status == 201)
            let unknown = try await fx.admin(
                "POST", "/api/admin/messages",
                json: ["toId": "nobody", "chatType": "single", "msgType": "custom", "content": ["a": 1]])
            #expect(unknown.status == 404 && unknown.code == 1103)
        }
    }

    @Test func sendAsAUserFollowsTheUsersRules() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob) = (users[0], users[1])
            let sent = try await fx.admin(
                "POST", "/api/admin/messages",
                json: [
                    "fromId": alice.userId, "toId": bob.userId, "chatType": "single", "msgType": "text",
                    "content": "from the backend", "clientMsgId": "b-1",
                ])
            #expect(sent.status == 201)
            #expect(sent.string("fromId") == alice.userId)
            #expect(try await fx.historySeqs(bob, MessagingFixture.singleID(alice, bob)) == [1])
            // The same clientMsgId again: the original, nothing stored.
            let again = try await fx.admin(
                "POST", "/api/admin/messages",
                json: [
                    "fromId": alice.userId, "toId": bob.userId, "chatType": "single", "msgType": "text",
                    "content": "from the backend", "clientMsgId": "b-1",
                ])
            #expect(again.status == 200 && again.string("id") == sent.string("id"))
            // Bob blocks Alice: her messages are refused as her own sends are.
            #expect(
                try await fx.client.send(
                    "PUT", "/api/im/blocks/\(alice.userId)", headers: ["Authorization": "Bearer \(bob.accessToken)"]
                ).status == 201)
            let refused = try await fx.admin(
                "POST", "/api/admin/messages",
                json: [
                    "fromId": alice.userId, "toId": bob.userId, "chatType": "single", "msgType": "text",
                    "content": "blocked",
                ])
            #expect(refused.code == 1119)
            let unknownSender = try await fx.admin(
                "POST", "/api/admin/messages",
                json: ["fromId": "ghost", "toId": bob.userId, "chatType": "single", "msgType": "text", "content": "x"])
            #expect(unknownSender.code == 1103)
            let notifyAsUser = try await fx.admin(
                "POST", "/api/admin/messages",
                json: [
                    "fromId": alice.userId, "toId": bob.userId, "chatType": "single", "msgType": "notify",
                    "content": ["event": "x"],
                ])
            #expect(notifyAsUser.code == 1002)
        }
    }

    @Test func noPushQueuesNoPushJobAndNoUnreadDoesNotCount() async throws {
        // No push worker: the jobs queued stay in the table to be counted (a worker would take and delete them).
        try await MessagingFixture.run(environment: ["PARLEY_PUSH_POLL_MS": "0"]) { fx in
            let user = try await fx.users(1)[0]
            _ = try await fx.database.query(
                "INSERT INTO app_push_settings (app_id, enabled) VALUES (\(fx.appId), true)")
            func pushJobs() async throws -> Int {
                try await fx.database.query("SELECT count(*) AS n FROM push_jobs WHERE app_id = \(fx.appId)")[0]
                    .decode("n", as: Int.self)
            }
            func send(_ options: [String: Any]) async throws -> TestResponse {
                try await fx.admin(
                    "POST", "/api/admin/messages",
                    json: [
                        "toId": user.userId, "chatType": "single", "msgType": "custom", "content": ["n": 1],
                        "options": options,
                    ])
            }
            #expect(try await send([:]).status == 201)
            #expect(try await pushJobs() == 1)
            #expect(try await send(["noPush": true]).status == 201)
            #expect(try await pushJobs() == 1)
            let conversationId = ConversationID.single("system", user.userId)
            #expect(try await fx.conversation(user, conversationId)?["unreadCount"] as? Int == 2)
            let uncounted = try await send(["noUnread": true, "noPush": true])
            #expect(uncounted.status == 201)
            #expect(try await fx.conversation(user, conversationId)?["unreadCount"] as? Int == 2)
            #expect(try await fx.historySeqs(user, conversationId) == [1, 2, 3])
            #expect(try await send(["noPush": false]).status == 201)
            #expect(try await pushJobs() == 2)
            #expect(try await fx.conversation(user, conversationId)?["unreadCount"] as? Int == 3)
            // Revoking the message that never counted leaves the unread count alone.
            let uncountedId = try #require(uncounted.data["id"] as? String)
            #expect(try await fx.admin("POST", "/api/admin/messages/\(uncountedId)/revoke", json: [:]).status == 200)
            #expect(try await fx.conversation(user, conversationId)?["unreadCount"] as? Int == 3)
        }
    }

    @Test func onlineOnlyIsNeitherStoredNorInHistory() async throws {
        try await MessagingFixture.run { fx in
            let user = try await fx.users(1)[0]
            let before = try await fx.messageCount()
            let sent = try await fx.admin(
                "POST", "/api/admin/messages",
                json: [
                    "toId": user.userId, "chatType": "single", "msgType": "custom", "content": ["live": true],
                    "options": ["onlineOnly": true],
                ])
            #expect(sent.status == 202)
            #expect(sent.data["seq"] as? Int == 0)
            #expect(try await fx.messageCount() == before)
            let huge = try await fx.admin(
                "POST", "/api/admin/messages",
                json: [
                    "toId": user.userId, "chatType": "single", "msgType": "custom",
                    "content": ["blob": String(repeating: "x", count: 7000)], "options": ["onlineOnly": true],
                ])
            #expect(huge.status == 413 && huge.code == 1132)
        }
    }

    @Test func broadcastToAThousandUsersReportsEachOne() async throws {
        try await MessagingFixture.run { fx in
            let ids = (0..<999).map { String(format: "bc%04d", $0) }
            try await Self.insertUsers(fx, ids)
            let answer = try await fx.admin(
                "POST", "/api/admin/messages/broadcast",
                json: [
                    "userIds": ids + ["missing-user"], "msgType": "custom", "content": Self.accountConflict,
                ])
            #expect(answer.status == 200)
            let results = try #require(answer.data["results"] as? [[String: Any]])
            #expect(results.count == 1000)
            #expect(answer.data["sent"] as? Int == 999)
            #expect(results.last?["status"] as? String == "unknown_user")
            #expect(results.dropLast().allSatisfy { $0["status"] as? String == "sent" && $0["messageId"] != nil })
            let stored = try await fx.database.query(
                """
                SELECT count(*) AS n, count(DISTINCT to_id) AS users FROM messages
                WHERE app_id = \(fx.appId) AND from_id = 'system'
                """)[0]
            #expect(try stored.decode("n", as: Int.self) == 999)
            #expect(try stored.decode("users", as: Int.self) == 999)
            // Over the limit, and empty.
            let tooMany = try await fx.admin(
                "POST", "/api/admin/messages/broadcast",
                json: ["userIds": (0..<1001).map { "u\($0)" }, "msgType": "custom", "content": ["a": 1]])
            #expect(tooMany.status == 400 && tooMany.code == 1002)
            let none = try await fx.admin(
                "POST", "/api/admin/messages/broadcast",
                json: ["userIds": [], "msgType": "custom", "content": ["a": 1]]
            )
            #expect(none.code == 1002)
        }
    }

    @Test func broadcastJobReachesEveryUserOnce() async throws {
        try await MessagingFixture.run { fx in
            let ids = (0..<40).map { String(format: "all%03d", $0) }
            try await Self.insertUsers(fx, ids)
            let created = try await fx.admin(
                "POST", "/api/admin/messages/broadcast/all",
                json: ["msgType": "custom", "content": ["type": "announcement"], "options": ["noPush": true]])
            #expect(created.status == 202)
            let jobId = try #require(created.string("jobId"))
            #expect(created.data["total"] as? Int == 40)
            var last: [String: Any] = [:]
            let finished = try await eventually(timeout: .seconds(20), interval: .milliseconds(50)) {
                last = try await fx.admin("GET", "/api/admin/messages/broadcast/\(jobId)").data
                return last["state"] as? String == "finished"
            }
            #expect(finished != nil)
            #expect(last["sent"] as? Int == 40 && last["failed"] as? Int == 0)
            #expect(last["finishedAt"] is String)
            #expect(try await fx.admin("GET", "/api/admin/messages/broadcast/999999").code == 1133)
        }
    }

    /// A worker that crashed after a chunk committed its messages but before the cursor moved: the instance that
    /// takes the job over sends that chunk again, which stores nothing twice (client ids `bc_<job>_<user>`).
    @Test func broadcastJobTakenOverAfterACrashSendsEachUserOnce() async throws {
        try await MessagingFixture.run { fx in
            let ids = (0..<12).map { String(format: "re%03d", $0) }
            try await Self.insertUsers(fx, ids)
            // The job, held by a worker that is gone (its lease runs for an hour: no worker takes it yet).
            let jobId = try await fx.database.query(
                """
                INSERT INTO broadcast_jobs (app_id, from_id, system, msg_type, content, total, state, lease_owner,
                                            leased_until)
                VALUES (\(fx.appId), 'system', true, 'custom', '{"n":1}', 12, 'running', 'crashed',
                        now() + interval '1 hour')
                RETURNING id
                """)[0].decode("id", as: Int64.self)
            // Its first chunk committed; the cursor did not.
            let first = Array(ids.prefix(5))
            _ = try await fx.database.query(
                """
                SELECT * FROM parley_broadcast_messages(
                    \(fx.appId), 'system', \(PostgresTextArray(first))::text[],
                    \(PostgresTextArray(first.map { ConversationID.single("system", $0) }))::text[],
                    \(PostgresTextArray(first.map { "bc_\(jobId)_\($0)" }))::text[], 'custom', '{"n":1}', NULL, true,
                    NULL, false)
                """)
            // The lease runs out: this server's worker takes the job over.
            _ = try await fx.database.query(
                "UPDATE broadcast_jobs SET leased_until = now() - interval '1 second' WHERE id = \(jobId)")
            let finished = try await eventually(timeout: .seconds(20), interval: .milliseconds(50)) {
                try await fx.admin("GET", "/api/admin/messages/broadcast/\(jobId)").string("state") == "finished"
            }
            #expect(finished != nil)
            let perUser = try await fx.database.query(
                """
                SELECT to_id, count(*) AS n FROM messages
                WHERE app_id = \(fx.appId) AND from_id = 'system' GROUP BY to_id
                """)
            #expect(perUser.count == 12)
            #expect(try perUser.allSatisfy { try $0.decode("n", as: Int.self) == 1 })
            let job = try await fx.admin("GET", "/api/admin/messages/broadcast/\(jobId)")
            #expect(job.data["sent"] as? Int == 12)
        }
    }

    @Test func adminRevokesAnyMessageAndClearsForEveryone() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let message = try await fx.sendOK(alice, to: bob.userId, content: "oops")
            let id = try #require(message["id"] as? String)
            // Long after the sender's window: the app may still revoke it.
            _ = try await fx.database.query(
                "UPDATE messages SET created_at = now() - interval '1 day' WHERE id = \(Int64(id)!)")
            let start = try await fx.sync(bob, cursor: nil)
            let revoked = try await fx.admin("POST", "/api/admin/messages/\(id)/revoke", json: [:])
            #expect(revoked.status == 200)
            #expect(revoked.data["revoked"] as? Bool == true)
            #expect(revoked.string("revokedBy") == "system")
            let changes = try await fx.syncUntil(bob, from: start.cursor) { changes in
                changes.contains { $0["type"] as? String == "revoke" }
            }.changes
            #expect(changes.contains { $0["type"] as? String == "revoke" && $0["operatorId"] as? String == "system" })
            #expect(try await fx.admin("POST", "/api/admin/messages/99999999/revoke", json: [:]).code == 1102)

            try await fx.sendOK(bob, to: alice.userId, content: "after")
            let conversationId = MessagingFixture.singleID(alice, bob)
            let cleared = try await fx.admin("POST", "/api/admin/conversations/\(conversationId)/clear")
            #expect(cleared.status == 200)
            #expect(cleared.data["members"] as? Int == 2)
            #expect(try await fx.historySeqs(alice, conversationId) == [])
            #expect(try await fx.historySeqs(bob, conversationId) == [])
            let clearChange = try await fx.syncUntil(bob, from: start.cursor) { changes in
                changes.contains { $0["cleared"] as? Bool == true }
            }.changes
            #expect(
                clearChange.contains {
                    $0["type"] as? String == "conversation" && $0["conversationId"] as? String == conversationId
                        && $0["cleared"] as? Bool == true
                })
            #expect(try await fx.admin("POST", "/api/admin/conversations/si:a:b/clear").code == 1101)
        }
    }

    @Test func badInputAndOtherApps() async throws {
        try await MessagingFixture.run { fx in
            let user = try await fx.users(1)[0]
            let unsigned = try await fx.client.post(
                "/api/admin/messages",
                json: ["toId": user.userId, "chatType": "single", "msgType": "custom", "content": ["a": 1]])
            #expect(unsigned.status == 401)
            let badSignature = try await fx.admin(
                "POST", "/api/admin/messages",
                json: ["toId": user.userId, "chatType": "single", "msgType": "custom", "content": ["a": 1]],
                secret: "not-the-secret")
            #expect(badSignature.status == 401 && badSignature.code == 1038)
            #expect(
                try await fx.admin(
                    "POST", "/api/admin/messages",
                    json: ["toId": "g_nope", "chatType": "group", "msgType": "custom", "content": ["a": 1]]
                ).code == 1104)
            #expect(
                try await fx.admin(
                    "POST", "/api/admin/messages",
                    json: ["toId": user.userId, "chatType": "room", "msgType": "custom", "content": ["a": 1]]
                ).code == 1002)
            #expect(try await fx.admin("POST", "/api/admin/messages", json: ["toId": user.userId]).code == 1002)

            // Another app's message and group are not found.
            let (otherApp, otherSecret) = try await fx.live.createApp(name: "Other")
            let other = MessagingFixture(
                live: fx.live, appKey: otherApp.appKey, appId: otherApp.id, secret: otherSecret)
            let stranger = try await other.users(1, prefix: "stranger")[0]
            let theirs = try await other.admin(
                "POST", "/api/admin/messages",
                json: ["toId": stranger.userId, "chatType": "single", "msgType": "custom", "content": ["a": 1]])
            let theirId = try #require(theirs.string("id"))
            #expect(try await fx.admin("POST", "/api/admin/messages/\(theirId)/revoke", json: [:]).code == 1102)
            let group = try await other.admin(
                "POST", "/api/admin/groups", json: ["ownerId": stranger.userId, "name": "Theirs"])
            let groupId = try #require(group.string("groupId"))
            #expect(try await fx.admin("GET", "/api/admin/groups/\(groupId)").code == 1104)
            #expect(try await fx.admin("POST", "/api/admin/groups/\(groupId)/dissolve").code == 1104)
        }
    }
}

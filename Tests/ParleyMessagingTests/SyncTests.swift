import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyMessaging

/// `GET /api/im/sync`: every change since a cursor exactly once, in order, across pages.
@Suite("Sync", .serialized)
struct SyncTests {
    @Test func oldCursorReplaysEveryChangeOnceInOrder() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let start = try await fx.sync(bob, cursor: nil)
            #expect(start.changes.isEmpty)
            let dm = MessagingFixture.singleID(alice, bob)

            var sent: [String] = []
            for n in 0..<5 {
                sent.append(try await fx.sendOK(alice, to: bob.userId, content: "m\(n)")["id"] as! String)
            }
            #expect(
                try await fx.client.post("/api/im/messages/\(sent[1])/revoke", token: alice.accessToken).status == 200)
            #expect(
                try await fx.client.patch(
                    "/api/im/messages/\(sent[2])", json: ["content": "m2 edited"],
                    token: alice.accessToken
                ).status == 200)
            #expect(
                try await fx.client.post("/api/im/conversations/\(dm)/read", json: ["seq": 4], token: bob.accessToken)
                    .status == 200)
            #expect(
                try await fx.client.patch(
                    "/api/im/conversations/\(dm)", json: ["isPinned": true], token: bob.accessToken
                ).status == 200)
            let group = try await fx.createGroup(carol, members: [bob])
            try await fx.sendOK(carol, to: group.groupId, chatType: "group", content: "group hi")
            // Not Bob's: a conversation between Alice and Carol.
            try await fx.sendOK(alice, to: carol.userId, content: "private")

            // Small pages, so the cursor is exercised at every boundary.
            let all = try await fx.syncUntil(bob, from: start.cursor, count: 11, pageSize: 2)
            let types = all.changes.compactMap { $0["type"] as? String }
            #expect(
                types == [
                    "message", "message", "message", "message", "message", "revoke", "edit", "read",
                    "conversation", "message", "message",
                ])
            let messageIDs = all.changes.compactMap { ($0["message"] as? [String: Any])?["id"] as? String }
            // Message entries carry the message as it is now: the revoked one without content.
            let firstFive = all.changes.prefix(5).compactMap { $0["message"] as? [String: Any] }
            #expect(firstFive.compactMap { $0["id"] as? String } == sent)
            #expect(firstFive[1]["revoked"] as? Bool == true)
            #expect(firstFive[1]["content"] as? String == "")
            #expect(all.changes[5]["msgId"] as? String == sent[1])
            #expect(all.changes[5]["operatorId"] as? String == alice.userId)
            #expect((all.changes[6]["message"] as? [String: Any])?["content"] as? String == "m2 edited")
            #expect(all.changes[7]["userId"] as? String == bob.userId)
            #expect(all.changes[7]["seq"] as? Int == 4)
            #expect(all.changes[8]["isPinned"] as? Bool == true)
            #expect(messageIDs.count == Set(messageIDs).count + 1) // the edited message appears as message and as edit
            #expect(!all.changes.contains { ($0["message"] as? [String: Any])?["content"] as? String == "private" })

            // Nothing new: an empty page, and the cursor holds.
            let again = try await fx.sync(bob, cursor: all.cursor)
            #expect(again.changes.isEmpty)
            // Alice sees Bob's read mark (a 1:1 receipt) but not his pin.
            let aliceChanges = try await fx.syncUntil(alice, from: start.cursor, count: 8).changes
            #expect(aliceChanges.contains { $0["type"] as? String == "read" && $0["userId"] as? String == bob.userId })
            #expect(!aliceChanges.contains { $0["type"] as? String == "conversation" })
        }
    }

    @Test func syncWhileSendingMissesNothingAndRepeatsNothing() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_DB_POOL_SIZE": "12"]) { fx in
            let users = try await fx.users(5)
            let reader = users[0]
            let senders = Array(users[1...])
            let start = try await fx.sync(reader, cursor: nil).cursor
            let sentIDs = Mutex<Set<String>>([])
            let perSender = 50
            let done = Atomic<Bool>(false)
            let sending = Task {
                defer { done.store(true, ordering: .releasing) }
                try await concurrently(senders.count, width: senders.count) { index in
                    for n in 0..<perSender {
                        let message = try await fx.sendOK(senders[index], to: reader.userId, content: "s\(index)-\(n)")
                        sentIDs.withLock { _ = $0.insert(message["id"] as! String) }
                    }
                }
            }
            // Sync repeatedly while the senders run, then once more after they finish.
            var cursor = start
            var received: [String] = []
            for _ in 0..<10_000 {
                let page = try await fx.sync(reader, cursor: cursor, limit: 7)
                received += page.changes.compactMap { ($0["message"] as? [String: Any])?["id"] as? String }
                cursor = page.cursor
                if done.load(ordering: .acquiring) && !page.hasMore { break }
            }
            try await sending.value
            received += try await fx.syncUntil(reader, from: cursor, count: senders.count * perSender - received.count)
                .changes
                .compactMap { ($0["message"] as? [String: Any])?["id"] as? String }
            #expect(received.count == senders.count * perSender)
            #expect(Set(received) == sentIDs.withLock { $0 })
        }
    }

    @Test func cursorsOlderThanThePrunedLogAreRefused() async throws {
        // The test keeps the change log itself.
        try await MessagingFixture.run(environment: ["PARLEY_IM_SYNC_MAINTENANCE_SECONDS": "0"]) { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let old = try await fx.sync(bob, cursor: nil).cursor
            try await fx.sendOK(alice, to: bob.userId, content: "one")
            let dm = MessagingFixture.singleID(alice, bob)
            #expect(
                try await fx.client.post("/api/im/conversations/\(dm)/read", json: ["seq": 1], token: bob.accessToken)
                    .status == 200)
            // Nothing is old enough yet: nothing pruned, the old cursor still works.
            let module = fx.live.app.messaging
            #expect(try await module.syncRepository.maintainChangeLog(retentionDays: 30).partitionsDropped == 0)
            #expect(try await fx.syncUntil(bob, from: old, count: 2).changes.count == 2)
            // The read mark ages past the retention, its xid range fills up and is dropped: the old cursor may have
            // missed it.
            _ = try await fx.database.query("UPDATE changes SET created_at = now() - interval '40 days'")
            // Its range is dropped once closed (the xids go past its end) and no running transaction can still write
            // to it; other tests' transactions, on other databases of the cluster, may hold that back for a moment.
            // Ranges of a second's xids here, so that a few passes close them.
            let dropped = try await eventually(timeout: .seconds(60)) {
                try await burnTransactionIds(fx.database, count: 2_000)
                _ = try await module.syncRepository.maintainChangeLog(
                    retentionDays: 30, span: .seconds(1), minimumWidth: 100)
                return try await fx.database.query("SELECT 1 FROM changes").isEmpty
            }
            #expect(dropped != nil)
            let expired = try await fx.client.get("/api/im/sync?cursor=\(old)", token: bob.accessToken)
            #expect(expired.status == 410)
            #expect(expired.code == 1116)
            // A fresh cursor works, and so does any cursor taken after the pruned changes.
            let fresh = try await fx.sync(bob, cursor: nil).cursor
            try await fx.sendOK(alice, to: bob.userId, content: "two")
            let after = try await fx.syncUntil(bob, from: fresh, count: 1).changes
            #expect((after.first?["message"] as? [String: Any])?["content"] as? String == "two")
        }
    }

    @Test func badCursorIsRefused() async throws {
        try await MessagingFixture.run { fx in
            let user = try await fx.users(1)[0]
            for bad in ["abc", "1-", "-1", "1-2-3", "99999999999999999999999-1"] {
                let response = try await fx.client.get("/api/im/sync?cursor=\(bad)", token: user.accessToken)
                #expect(response.status == 400, "cursor \(bad)")
                #expect(response.code == 1114, "cursor \(bad)")
            }
            #expect(try await fx.client.get("/api/im/sync?limit=0", token: user.accessToken).code == 1002)
            #expect(try await fx.client.get("/api/im/sync?limit=501", token: user.accessToken).code == 1002)
        }
    }
}

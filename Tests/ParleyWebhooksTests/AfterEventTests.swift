import Foundation
import ParleyAuth
import ParleyLiveSupport
import ParleyTestSupport
import Testing

@testable import ParleyWebhooks

@Suite(.serialized) struct AfterEventTests {
    @Test func afterSendArrivesSignedWithTheAppSecretAndCarriesTheMessage() async throws {
        try await WebhookFixture.run { fixture in
            try await fixture.configure([.afterSend])
            let users = try await fixture.messaging.users(2)
            let sent = try await fixture.messaging.sendOK(
                users[0], to: users[1].userId, msgType: "custom", content: #"{"type":"account_conflict","n":1.50}"#,
                clientMsgId: "c-1")
            let arrived = try await eventually(timeout: .seconds(30)) {
                !fixture.receiver.delivered(event: "after_send").isEmpty
            }
            #expect(arrived != nil)
            let call = try #require(fixture.receiver.delivered(event: "after_send").first)
            // Verifiable with the inbound scheme: METHOD, the target as sent, timestamp, nonce, body hash.
            #expect(call.target == "/hooks/parley?tenant=test")
            #expect(call.headers["x-app-key"] == fixture.messaging.appKey)
            let expected = RequestSignature.sign(
                secret: fixture.messaging.secret, method: "POST", pathWithQuery: call.target,
                timestamp: call.headers["x-timestamp"] ?? "", nonce: call.headers["x-nonce"] ?? "", body: call.body)
            #expect(call.headers["x-signature"] == expected)
            let skew = abs(Int64(call.headers["x-timestamp"] ?? "0")! - Int64(Date().timeIntervalSince1970))
            #expect(skew < 300)
            #expect(call.headers["x-parley-event"] == "after_send")
            #expect(call.headers["x-parley-idempotency-key"] == call.eventId)
            #expect(call.eventId?.hasPrefix("evt_") == true)
            let message = call.message
            #expect(message["id"] as? String == sent["id"] as? String)
            #expect(message["conversationId"] as? String == sent["conversationId"] as? String)
            #expect(message["seq"] as? Int == 1)
            #expect(message["fromId"] as? String == users[0].userId)
            #expect(message["toId"] as? String == users[1].userId)
            #expect(message["chatType"] as? String == "single")
            #expect(message["msgType"] as? String == "custom")
            #expect(message["clientMsgId"] as? String == "c-1")
            #expect(message["system"] as? Bool == false)
            #expect((message["content"] as? [String: Any])?["type"] as? String == "account_conflict")
            // The content's numbers as the sender wrote them.
            #expect(String(decoding: call.body, as: UTF8.self).contains(#""n":1.50"#))
        }
    }

    @Test func aReceiverDownForAWhileGetsEveryEventInOrderPerConversation() async throws {
        try await WebhookFixture.run(environment: ["PARLEY_WEBHOOK_MAX_ATTEMPTS": "100"]) { fixture in
            try await fixture.configure([.afterSend, .afterRevoke])
            let users = try await fixture.messaging.users(3)
            let conversations = [users[1].userId, users[2].userId]
            _ = try await fixture.messaging.sendOK(users[0], to: conversations[0], content: "warm-up")
            let warmedUp = try await eventually(timeout: .seconds(30)) {
                fixture.receiver.delivered(event: "after_send").count == 1
            }
            #expect(warmedUp != nil)
            // One connection carries calls one after another (keep-alive).
            #expect(fixture.receiver.openConnections == 1)

            await fixture.receiver.stop()
            var sent: [String: [Int]] = [:]
            for round in 0..<4 {
                for peer in conversations {
                    let message = try await fixture.messaging.sendOK(users[0], to: peer, content: "round \(round)")
                    sent[message["conversationId"] as! String, default: []].append(message["seq"] as! Int)
                }
            }
            // Attempts fail while it is down: the heads of both conversations are retried with backoff.
            let retrying = try await eventually(timeout: .seconds(30)) {
                try await fixture.deliveries(state: "pending").contains { $0.attempts >= 1 && $0.lastError != nil }
            }
            #expect(retrying != nil)
            try await fixture.receiver.start()

            let total = 9
            let all = try await eventually(timeout: .seconds(60)) {
                Set(fixture.receiver.delivered(event: "after_send").compactMap(\.eventId)).count == total
            }
            #expect(all != nil)
            let delivered = fixture.receiver.delivered(event: "after_send")
            // Duplicates only with the same idempotency key, and the same event.
            var bodies: [String: String] = [:]
            for call in delivered {
                let id = try #require(call.eventId)
                let data = String(decoding: try JSONSerialization.data(withJSONObject: call.data), as: UTF8.self)
                if let seen = bodies[id] { #expect(seen == data) } else { bodies[id] = data }
            }
            // In order per conversation, by first arrival.
            var firstArrival: [String: [Int]] = [:]
            var seenIds: Set<String> = []
            for call in delivered where seenIds.insert(call.eventId!).inserted {
                let message = call.message
                firstArrival[message["conversationId"] as! String, default: []].append(message["seq"] as! Int)
            }
            for (conversation, seqs) in sent {
                let arrived = firstArrival[conversation] ?? []
                #expect(arrived.filter { seqs.contains($0) } == seqs)
                #expect(arrived == arrived.sorted())
            }
            #expect(fixture.receiver.calls(event: "after_revoke").isEmpty)
        }
    }

    @Test func aBatchSizeCarriesSeveralEventsPerCallInOrderAcrossAnOutage() async throws {
        try await WebhookFixture.run(environment: ["PARLEY_WEBHOOK_MAX_ATTEMPTS": "100"]) { fixture in
            try await fixture.configure([.afterSend], batchSize: 5)
            let users = try await fixture.messaging.users(3)
            await fixture.receiver.stop()
            var sent: [String: [Int]] = [:]
            for round in 0..<6 {
                for peer in [users[1].userId, users[2].userId] {
                    let message = try await fixture.messaging.sendOK(users[0], to: peer, content: "round \(round)")
                    sent[message["conversationId"] as! String, default: []].append(message["seq"] as! Int)
                }
            }
            let retrying = try await eventually(timeout: .seconds(30)) {
                try await fixture.deliveries(state: "pending").contains { $0.attempts >= 1 && $0.lastError != nil }
            }
            #expect(retrying != nil)
            try await fixture.receiver.start()

            func deliveredEnvelopes() -> [[String: Any]] {
                fixture.receiver.calls.filter { (200...299).contains($0.status) }.flatMap(\.events)
            }
            let all = try await eventually(timeout: .seconds(60)) {
                Set(deliveredEnvelopes().compactMap { $0["eventId"] as? String }).count == 12
            }
            #expect(all != nil)
            let calls = fixture.receiver.calls.filter { (200...299).contains($0.status) }
            // Every call is a batch of at most 5, signed as a whole like any call; 12 events waited, so one call
            // carried a full batch.
            #expect(calls.allSatisfy { $0.headers["x-parley-event"] == "batch" && (1...5).contains($0.events.count) })
            #expect(calls.map(\.events.count).max() == 5)
            for call in calls {
                let expected = RequestSignature.sign(
                    secret: fixture.messaging.secret, method: "POST", pathWithQuery: call.target,
                    timestamp: call.headers["x-timestamp"] ?? "", nonce: call.headers["x-nonce"] ?? "", body: call.body)
                #expect(call.headers["x-signature"] == expected)
            }
            // Each envelope as a lone call carries it; in order per conversation, by first arrival.
            var firstArrival: [String: [Int]] = [:]
            var seen: Set<String> = []
            for envelope in deliveredEnvelopes() where seen.insert(envelope["eventId"] as! String).inserted {
                #expect(envelope["event"] as? String == "after_send")
                #expect(envelope["appKey"] as? String == fixture.messaging.appKey)
                let message = (envelope["data"] as? [String: Any])?["message"] as? [String: Any] ?? [:]
                firstArrival[message["conversationId"] as! String, default: []].append(message["seq"] as! Int)
            }
            for (conversation, seqs) in sent { #expect(firstArrival[conversation] == seqs) }
            let recorded = try await eventually(timeout: .seconds(30)) {
                try await fixture.deliveries(state: "delivered").count == 12
            }
            #expect(recorded != nil)
        }
    }

    /// An app with batches gets its sends queued a group per statement (migrations/0030) and all its events in one
    /// stream: a broadcast to 7 users is 3 groups of at most 3, a revoke queued after them waits behind them.
    @Test func withBatchesASendStatementIsQueuedInGroupsAndTheAppsEventsGoInOrder() async throws {
        try await WebhookFixture.run(environment: ["PARLEY_WEBHOOK_MAX_ATTEMPTS": "100"]) { fixture in
            try await fixture.configure([.afterSend, .afterRevoke], batchSize: 3)
            let users = try await fixture.messaging.users(7)
            await fixture.receiver.stop()
            let broadcast = try await fixture.signed(
                "POST", "/api/admin/messages/broadcast",
                json: ["userIds": users.map(\.userId), "msgType": "text", "content": "hello"])
            #expect(broadcast.status == 200)
            let messageIds = (broadcast.data["results"] as? [[String: Any]] ?? []).compactMap {
                $0["messageId"] as? String
            }
            #expect(messageIds.count == 7)
            let revoked = try await fixture.signed("POST", "/api/admin/messages/\(messageIds[0])/revoke")
            #expect(revoked.status == 200)
            let pending = try await fixture.deliveries(state: "pending")
            #expect(pending.map(\.events) == [3, 3, 1, 1])
            #expect(pending.map(\.event) == ["after_send", "after_send", "after_send", "after_revoke"])
            #expect(pending.allSatisfy { $0.key == "*" })

            try await fixture.receiver.start()
            func delivered() -> [[String: Any]] {
                fixture.receiver.calls.filter { (200...299).contains($0.status) }.flatMap(\.events)
            }
            let all = try await eventually(timeout: .seconds(60)) {
                Set(delivered().compactMap { $0["eventId"] as? String }).count == 8
            }
            #expect(all != nil)
            // Whole groups per call, never more than the batch size here.
            let calls = fixture.receiver.calls.filter { (200...299).contains($0.status) }
            #expect(calls.allSatisfy { (1...3).contains($0.events.count) })
            var firstArrival: [[String: Any]] = []
            var seen: Set<String> = []
            for envelope in delivered() where seen.insert(envelope["eventId"] as! String).inserted {
                firstArrival.append(envelope)
            }
            // Each event of a group has its own id; the sends in message order, then the revoke.
            let groupIds = Set(pending.prefix(3).map(\.id))
            let sendIds = firstArrival.prefix(7).map { $0["eventId"] as! String }
            #expect(sendIds.allSatisfy { id in groupIds.contains { id.hasPrefix("evt_\($0)_") } })
            #expect(firstArrival.prefix(7).map { $0["event"] as? String } == Array(repeating: "after_send", count: 7))
            let sentOrder = firstArrival.prefix(7).map {
                (($0["data"] as? [String: Any])?["message"] as? [String: Any])?["id"] as? String
            }
            // In id order (the broadcast answers in the order of its user list).
            #expect(sentOrder == messageIds.sorted { Int($0)! < Int($1)! })
            #expect(firstArrival.last?["event"] as? String == "after_revoke")
            #expect((firstArrival.last?["data"] as? [String: Any])?["messageId"] as? String == messageIds[0])

            // A group queued before the batch size went down to 1: each of its events alone, with its own id.
            await fixture.receiver.stop()
            let second = try await fixture.signed(
                "POST", "/api/admin/messages/broadcast",
                json: ["userIds": Array(users.prefix(3).map(\.userId)), "msgType": "text", "content": "again"])
            #expect(second.status == 200)
            let group = try #require(try await fixture.deliveries(state: "pending").first)
            #expect(group.events == 3)
            try await fixture.configure([.afterSend, .afterRevoke], batchSize: 1)
            let before = fixture.receiver.calls.count
            try await fixture.receiver.start()
            // The group failed while the receiver was down and now waits out its backoff, the longer the slower the
            // machine ran the steps above (one loaded run waited past a minute): what is checked here is how the
            // group is sent, not when, so it is due now.
            _ = try await fixture.live.app.database.query(
                "UPDATE webhook_jobs SET next_attempt_at = now() WHERE state = 'pending'")
            let lone = try await eventually(timeout: .seconds(60)) {
                Set(fixture.receiver.delivered(event: "after_send").compactMap(\.eventId)).count == 3
            }
            #expect(lone != nil)
            let loneIds = fixture.receiver.calls.dropFirst(before).filter { (200...299).contains($0.status) }
                .compactMap(\.eventId)
            #expect(Array(loneIds.prefix(3)) == (1...3).map { "evt_\(group.id)_\($0)" })
        }
    }

    @Test func anEventGoesDeadAfterMaxAttemptsAndTheAdminRouteRetriesIt() async throws {
        try await WebhookFixture.run(environment: ["PARLEY_WEBHOOK_MAX_ATTEMPTS": "2"]) { fixture in
            try await fixture.configure([.afterSend])
            fixture.receiver.setMode(.fail(status: 500))
            let users = try await fixture.messaging.users(2)
            let first = try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "first")
            let second = try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "second")
            let bothDead = try await eventually(timeout: .seconds(60)) {
                try await fixture.deliveries(state: "dead").count == 2
            }
            #expect(bothDead != nil)
            let dead = try await fixture.deliveries(state: "dead")
            // Newest first; each tried twice, in order (the second only once the first was dead).
            #expect(dead.map(\.attempts) == [2, 2])
            #expect(dead.allSatisfy { $0.lastStatus == 500 && $0.lastError == "HTTP 500" })
            #expect(dead.allSatisfy { $0.event == "after_send" })
            #expect(dead.allSatisfy { $0.key == first["conversationId"] as? String })
            let attempts = fixture.receiver.calls(event: "after_send").map { $0.message["id"] as? String }
            #expect(attempts == [first["id"], first["id"], second["id"], second["id"]].map { $0 as? String })

            fixture.receiver.setMode(.accept)
            let oldest = try #require(dead.last?.id)
            let retried = try await fixture.signed("POST", "/api/admin/webhooks/deliveries/\(oldest)/retry")
            #expect(retried.status == 200)
            #expect(retried.data["state"] as? String == "pending")
            #expect(retried.data["attempts"] as? Int == 0)
            let redelivered = try await eventually(timeout: .seconds(30)) {
                !fixture.receiver.delivered(event: "after_send").isEmpty
            }
            #expect(redelivered != nil)
            #expect(
                fixture.receiver.delivered(event: "after_send").first?.message["id"] as? String == first["id"]
                    as? String)
            // Recorded as delivered once the answer is in (the receiver saw the call before that).
            let recorded = try await eventually(timeout: .seconds(30)) {
                try await fixture.deliveries(state: "delivered").map(\.id) == [oldest]
            }
            #expect(recorded != nil)

            // Retrying what is not dead, or not there.
            let again = try await fixture.signed("POST", "/api/admin/webhooks/deliveries/\(oldest)/retry")
            #expect(again.status == 409)
            #expect(again.code == 1603)
            let missing = try await fixture.signed("POST", "/api/admin/webhooks/deliveries/999999/retry")
            #expect(missing.status == 404)
            #expect(missing.code == 1602)
            let badState = try await fixture.signed("GET", "/api/admin/webhooks/deliveries?state=lost")
            #expect(badState.status == 400)
            let unsigned = try await fixture.messaging.client.get("/api/admin/webhooks/deliveries")
            #expect(unsigned.status == 401 || unsigned.status == 403 || unsigned.status == 400)
            let settings = try await fixture.signed("GET", "/api/admin/webhooks")
            #expect(settings.data["url"] as? String == fixture.receiver.url)
            #expect(settings.data["events"] as? [String] == ["after_send"])
            #expect(settings.data["timeoutMs"] as? Int == 2000)

            // Finished events (the delivered one and the one still dead) go after the retention; a pending one stays.
            fixture.receiver.setMode(.fail(status: 503))
            _ = try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "third")
            #expect(try await fixture.webhooks.jobs.prune(olderThanHours: 1) == 0)
            let pruned = try await fixture.webhooks.jobs.prune(olderThanHours: 0)
            #expect(pruned == 2)
            #expect(try await fixture.deliveries(state: "dead").isEmpty)
        }
    }

    @Test func otherEventsAreQueuedOnlyWhenConfigured() async throws {
        try await WebhookFixture.run { fixture in
            let users = try await fixture.messaging.users(2)
            _ = try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "before any webhook")
            try await fixture.configure([.login, .afterRevoke, .afterEdit, .groupCreated, .groupMemberAdded])
            let more = try await fixture.messaging.users(1, prefix: "later")
            let message = try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "to edit")
            let id = message["id"] as! String
            let edit = try await fixture.messaging.client.patch(
                "/api/im/messages/\(id)", json: ["content": "edited"], token: users[0].accessToken)
            #expect(edit.status == 200)
            let revoke = try await fixture.messaging.client.post(
                "/api/im/messages/\(id)/revoke", token: users[0].accessToken)
            #expect(revoke.status == 200)
            let group = try await fixture.messaging.client.post(
                "/api/im/groups", json: ["name": "G", "memberIds": [users[1].userId]], token: users[0].accessToken)
            #expect(group.status == 200 || group.status == 201)
            let arrived = try await eventually(timeout: .seconds(30)) {
                !fixture.receiver.delivered(event: "after_revoke").isEmpty
                    && fixture.receiver.delivered(event: "group_member_added").count == 2
                    && !fixture.receiver.delivered(event: "login").isEmpty
            }
            #expect(arrived != nil)
            #expect(fixture.receiver.calls(event: "after_send").isEmpty)
            let login = try #require(fixture.receiver.delivered(event: "login").first)
            #expect(login.data["userId"] as? String == more[0].userId)
            let edited = try #require(fixture.receiver.delivered(event: "after_edit").first)
            #expect(edited.message["content"] as? String == "edited")
            #expect(edited.message["id"] as? String == id)
            #expect((edited.message["editedAt"] as? Int ?? 0) >= (edited.message["createdAt"] as? Int ?? .max))
            let revoked = try #require(fixture.receiver.delivered(event: "after_revoke").first)
            #expect(revoked.data["messageId"] as? String == id)
            #expect(revoked.data["operatorId"] as? String == users[0].userId)
            let created = try #require(fixture.receiver.delivered(event: "group_created").first)
            #expect(created.data["ownerId"] as? String == users[0].userId)
        }
    }
}

import Foundation
import ParleyApp
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

/// `PARLEY_DATABASE_READ_URL` through the HTTP API, against the streaming replica `scripts/test` starts: history
/// and the conversation list right after a send include it, read on the replica when it has caught up and on the
/// primary when it cannot, whichever instance took the send. Sync includes it once every transaction that began
/// before it has ended (on the primary as on a replica: other tests' transactions hold its horizon back), hence
/// `syncUntil`.
@Suite("Replica reads", .serialized)
struct ReplicaReadTests {
    /// Two instances on one database, both reading from the replica: `patient` waits up to a minute for it (the
    /// replica replays every test's WAL, and lagged seconds behind in loaded runs; its client waits longer still),
    /// so its reads land there; `impatient` waits 100 ms.
    func withInstances(
        _ body:
            @Sendable (_ patient: MessagingFixture, _ impatient: MessagingFixture, _ replicaAdmin: PostgresClient)
            async throws -> Void
    ) async throws {
        try await TestReplica.exclusively {
            try await withDatabase { url in
                let replicaURL = try TestReplica.url(forPrimary: url)
                // No upkeep of sync's change log: adding or dropping a range takes an exclusive lock that, replayed on
                // the standby, may cancel a read there (which then runs on the primary, as it should; these tests
                // count where reads ran).
                let environment = ["PARLEY_DATABASE_READ_URL": replicaURL, "PARLEY_IM_SYNC_MAINTENANCE_SECONDS": "0"]
                let patient = try await LiveApp(
                    databaseURL: url,
                    environment: environment.merging(["PARLEY_DATABASE_READ_MAX_WAIT_MS": "60000"]) { $1 })
                // One master key: tokens one instance issues verify on the other.
                let impatient = try? await LiveApp(
                    databaseURL: url, masterKeyHex: patient.masterKeyHex,
                    environment: environment.merging(["PARLEY_DATABASE_READ_MAX_WAIT_MS": "100"]) { $1 })
                let replicaAdmin = PostgresClient(
                    configuration: PostgresConfiguration(conninfo: try TestReplica.adminURL(), poolSize: 1),
                    group: TestEnvironment.eventLoopGroup, logger: TestEnvironment.capturingLogger().logger)
                do {
                    guard let impatient else { throw TestFailure("the second instance did not start") }
                    // The replica has the migrated schema before the test reads (else the first reads fall back).
                    let replica = PostgresClient(
                        configuration: PostgresConfiguration(conninfo: replicaURL, poolSize: 1),
                        group: TestEnvironment.eventLoopGroup, logger: TestEnvironment.capturingLogger().logger)
                    let migrated = try await eventually(timeout: .seconds(60)) {
                        (try? await replica.query("SELECT 1 FROM messages LIMIT 1")) != nil
                    }
                    await replica.shutdown()
                    guard migrated != nil else { throw TestFailure("the replica never got the schema") }
                    let (app, secret) = try await patient.createApp(name: "Replicas")
                    impatient.auth.directory.upsert(app)
                    try await body(
                        MessagingFixture(
                            live: patient, appKey: app.appKey, appId: app.id, secret: secret,
                            client: TestClient(port: patient.port, timeoutSeconds: 90)),
                        MessagingFixture(live: impatient, appKey: app.appKey, appId: app.id, secret: secret),
                        replicaAdmin)
                } catch {
                    await replicaAdmin.shutdown()
                    await impatient?.stop()
                    await patient.stop()
                    throw error
                }
                await replicaAdmin.shutdown()
                await impatient?.stop()
                await patient.stop()
            }
        }
    }

    static func messageIDs(_ response: TestResponse) -> [String] {
        (response.data["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    @Test func syncHistoryAndTheListAfterASendIncludeItAndAreReadOnTheReplica() async throws {
        try await withInstances { fx, _, _ in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let start = try await fx.sync(bob, cursor: nil)
            let dm = MessagingFixture.singleID(alice, bob)
            for n in 0..<2 {
                let sent = try await fx.sendOK(alice, to: bob.userId, content: "m\(n)")["id"] as! String
                let synced = try await fx.syncUntil(bob, from: start.cursor, timeout: .seconds(120)) {
                    $0.contains { ($0["message"] as? [String: Any])?["id"] as? String == sent }
                }
                #expect(synced.changes.compactMap { ($0["message"] as? [String: Any])?["id"] as? String }.last == sent)
                let history = try await fx.history(alice, dm)
                #expect(history.status == 200 && Self.messageIDs(history).last == sent)
                let listed = try await fx.conversation(bob, dm)
                #expect((listed?["latestMessage"] as? [String: Any])?["id"] as? String == sent)
            }
            // Every routed read ran on the replica: the first sync, then per send at least one sync, the history and
            // the list.
            let reads = fx.live.app.reads.statistics
            #expect(reads.primaryReads == 0 && reads.replicaReads >= 7, "\(reads)")
            #expect(
                fx.live.app.metrics.render().contains(
                    "parley_db_reads_total{target=\"replica\"} \(reads.replicaReads)"))
        }
    }

    /// The lookups, each right after the write it must show, each read on the replica (one routed read each).
    @Test func lookupsAfterAWriteShowItAndAreReadOnTheReplica() async throws {
        try await withInstances { fx, _, _ in
            let users = try await fx.users(3)
            let (owner, member, outsider) = (users[0], users[1], users[2])
            /// GETs `target` as `session` and requires that it ran exactly one routed read, on the replica.
            func routedGet(_ target: String, _ session: Session) async throws -> TestResponse {
                let before = fx.live.app.reads.statistics
                let response = try await fx.client.get(target, token: session.accessToken)
                let after = fx.live.app.reads.statistics
                #expect(
                    after.replicaReads == before.replicaReads + 1 && after.primaryReads == before.primaryReads,
                    "\(target): \(before) -> \(after)")
                return response
            }
            let group = try await fx.createGroup(owner, name: "Replicated", members: [member])
            let info = try await routedGet("/api/im/groups/\(group.groupId)", member)
            #expect(info.status == 200 && info.string("name") == "Replicated", "\(info.text)")
            let members = try await routedGet("/api/im/groups/\(group.groupId)/members", member)
            let memberIds = (members.data["members"] as? [[String: Any]] ?? []).compactMap { $0["userId"] as? String }
            #expect(Set(memberIds) == [owner.userId, member.userId], "\(members.text)")

            let sent =
                try await fx.sendOK(
                    owner, to: group.groupId, chatType: "group", content: "replicated lookup")["id"] as! String
            let byId = try await routedGet("/api/im/messages/\(sent)", member)
            #expect(byId.status == 200 && byId.string("id") == sent, "\(byId.text)")
            let pinned = try await fx.client.send(
                "PUT", "/api/im/messages/\(sent)/pin", headers: ["Authorization": "Bearer \(owner.accessToken)"])
            #expect(pinned.status == 200, "\(pinned.text)")
            let pins = try await routedGet("/api/im/conversations/\(group.conversationId)/pins", member)
            #expect(
                (pins.data["pins"] as? [[String: Any]] ?? []).compactMap {
                    ($0["message"] as? [String: Any])?["id"] as? String
                } == [sent], "\(pins.text)")
            let readers = try await routedGet("/api/im/messages/\(sent)/reads", owner)
            #expect(readers.status == 200 && readers.string("msgId") == sent, "\(readers.text)")
            try await fx.live.app.messaging.searchIndexer.drain()
            let found = try await routedGet("/api/im/search?q=replicated", member)
            #expect(
                (found.data["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } == [sent],
                "\(found.text)")

            let asked = try await fx.client.post(
                "/api/im/friends/requests", json: ["userId": outsider.userId], token: owner.accessToken)
            let requestId = try #require((asked.data["request"] as? [String: Any])?["id"] as? String, "\(asked.text)")
            let accepted = try await fx.client.post(
                "/api/im/friends/requests/\(requestId)/accept", token: outsider.accessToken)
            #expect(accepted.status == 200, "\(accepted.text)")
            let friends = try await routedGet("/api/im/friends", owner)
            #expect(
                (friends.data["friends"] as? [[String: Any]] ?? []).compactMap { $0["userId"] as? String }
                    == [outsider.userId], "\(friends.text)")
        }
    }

    @Test func aSendOnOneInstanceIsInTheNextReadOnAnotherWhileTheReplicaIsPaused() async throws {
        try await withInstances { fx, other, replicaAdmin in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let dm = MessagingFixture.singleID(alice, bob)
            let start = try await other.sync(bob, cursor: nil)
            _ = try await replicaAdmin.query("SELECT pg_wal_replay_pause()")
            do {
                let paused = try await eventually(timeout: .seconds(30)) {
                    try await replicaAdmin.query("SELECT pg_get_wal_replay_pause_state() AS s")[0]
                        .decode("s", as: String.self) == "paused"
                }
                #expect(paused != nil)
                // Sent through one instance, read through the other: its replica is behind, so the primary answers.
                let sent = try await fx.sendOK(alice, to: bob.userId, content: "while paused")["id"] as! String
                let history = try await other.history(bob, dm)
                #expect(history.status == 200 && Self.messageIDs(history) == [sent])
                let synced = try await other.syncUntil(bob, from: start.cursor, timeout: .seconds(120)) {
                    !$0.isEmpty
                }
                #expect(synced.changes.compactMap { ($0["message"] as? [String: Any])?["id"] as? String } == [sent])
                #expect((other.live.app.reads.statistics.fallbacks["lagging"] ?? 0) >= 2)
            } catch {
                _ = try? await replicaAdmin.query("SELECT pg_wal_replay_resume()")
                throw error
            }
            _ = try await replicaAdmin.query("SELECT pg_wal_replay_resume()")
        }
    }
}

import Foundation
import ParleyLiveSupport
import ParleyObservability
import ParleyPostgres
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyMessaging

/// Uses up `count` transaction ids: a subtransaction that writes, each, in one statement.
func burnTransactionIds(_ database: PostgresClient, count: Int) async throws {
    try await database.withConnection { connection in
        try await connection.execute(
            unsafeSQL: """
                CREATE TEMP TABLE IF NOT EXISTS xid_burn (n int);
                DO $$ BEGIN
                    FOR i IN 1..\(count) LOOP
                        BEGIN INSERT INTO xid_burn VALUES (i); EXCEPTION WHEN others THEN NULL; END;
                    END LOOP;
                END $$;
                DROP TABLE xid_burn;
                """)
    }
}

/// What concurrent readers saw.
private final class ReadersState: Sendable {
    let stop = Atomic<Bool>(false)
    let answered = Atomic<Int>(0)
    let failures = Mutex<[String]>([])
}

/// The sync change log partitioned by xid ranges (migrations/0041).
@Suite struct ChangeLogPartitionTests {
    /// The partition each change row is in.
    private func partitions(_ database: PostgresClient) async throws -> [String] {
        try await database.query("SELECT tableoid::regclass::text AS part FROM changes ORDER BY xid, id")
            .map { try $0.decode("part", as: String.self) }
    }

    /// The partition holding the test change named `name`.
    private func partition(_ database: PostgresClient, of name: String) async throws -> String? {
        let payload = "{\"n\":\"\(name)\"}"
        return try await database.query(
            "SELECT tableoid::regclass::text AS part FROM changes WHERE payload = \(payload)"
        ).first?.decode("part", as: String.self)
    }

    private func ranges(_ database: PostgresClient) async throws -> [String] {
        try await database.query("SELECT name FROM change_partitions ORDER BY xid_from").map { try $0.decode("name") }
    }

    /// A change of user `u` of app 1 (per-user changes need no conversation).
    /// `xid`: the transaction id to file it under (default: its own transaction's).
    private func addChange(_ database: PostgresClient, _ name: String, xid: UInt64? = nil) async throws {
        let payload = "{\"n\":\"\(name)\"}"
        if let xid {
            _ = try await database.query(
                """
                INSERT INTO changes (app_id, user_id, kind, payload, xid)
                VALUES (1, 'u', 'profile', \(payload), \(String(xid))::xid8)
                """)
        } else {
            _ = try await database.query(
                "INSERT INTO changes (app_id, user_id, kind, payload) VALUES (1, 'u', 'profile', \(payload))")
        }
    }

    /// Where the first range starts.
    private func firstRangeStart(_ database: PostgresClient) async throws -> UInt64 {
        let rows = try await database.query("SELECT min(xid_from)::text AS start FROM change_partitions")
        return try #require(UInt64(try rows[0].decode("start", as: String.self)))
    }

    /// User `u`'s changes after `cursor`, once both test changes are below the horizon: sync returns only rows older
    /// than the oldest transaction running anywhere in the cluster, and other tests' transactions hold it back.
    private func pageOnceComplete(_ repository: SyncRepository, after cursor: SyncCursor) async throws
        -> (entries: [StreamEntry], next: SyncCursor, hasMore: Bool)
    {
        var page = try await repository.changes(appId: 1, userId: "u", after: cursor, limit: 10)
        _ = try await eventually(timeout: .seconds(60)) {
            page = try await repository.changes(appId: 1, userId: "u", after: cursor, limit: 10)
            return page.entries.count >= 2
        }
        return page
    }

    @Test func rangesAreAddedAheadAndARowThatReachedTheOverflowMovesIntoItsRange() async throws {
        try await withMigratedClient { database in
            let repository = SyncRepository(database: database)
            let first = try await ranges(database)
            try #require(first.count == 1)
            // Filed under the first range's first xid: other tests' transactions (the cluster's xids are shared) may
            // have used up that range before this runs.
            let firstXid = try await firstRangeStart(database)
            let start = SyncCursor(xid: firstXid, position: 0)
            try await addChange(database, "one", xid: firstXid)
            #expect(try await partition(database, of: "one") == first[0])

            // More xids than the first range holds go by with no maintenance: the next change lands in the overflow
            // partition, and sync reads it there.
            try await burnTransactionIds(database, count: 1_500)
            try await addChange(database, "two")
            #expect(try await partition(database, of: "two") == "changes_overflow")
            #expect(try await pageOnceComplete(repository, after: start).entries.count == 2)

            // A pass adds the next range from where the first ends and moves the row into it.
            let done = try await repository.maintainChangeLog(retentionDays: 30)
            #expect(done.partitionsAdded == 1)
            #expect(done.partitionsDropped == 0)
            let now = try await ranges(database)
            try #require(now.count == 2 && now.first == first.first, "\(now)")
            #expect(try await partition(database, of: "two") == now[1])
            #expect(Set(try await partitions(database)).isSubset(of: now))
            let bounds = try await database.query(
                "SELECT xid_from::text AS f, xid_to::text AS t FROM change_partitions ORDER BY xid_from")
            try #require(bounds.count == 2)
            #expect(try bounds[1].decode("f", as: String.self) == bounds[0].decode("t", as: String.self))
            // Far enough ahead that the next pass adds nothing.
            #expect(try await repository.maintainChangeLog(retentionDays: 30).partitionsAdded == 0)

            // Every change once, in order.
            let page = try await pageOnceComplete(repository, after: start)
            #expect(page.entries.count == 2)
            #expect(page.entries.allSatisfy { $0.kind == "profile" })
            #expect(page.entries.map { "\($0.payload)" }.map { $0.contains("one") } == [true, false])
            #expect(!page.hasMore)
        }
    }

    @Test func aSyncReadsOnlyTheRangesAtOrAfterItsCursor() async throws {
        try await withMigratedClient { database in
            // The first range closes, and a recent change in it keeps it (an empty one would be dropped): written
            // with an xid of the range's, as other tests' transactions may have used up its xids already.
            try await burnTransactionIds(database, count: 1_500)
            try await addChange(database, "first", xid: try await firstRangeStart(database))
            let repository = SyncRepository(database: database)
            #expect(try await repository.maintainChangeLog(retentionDays: 30).partitionsAdded == 1)
            let names = try await ranges(database)
            try #require(names.count == 2, "\(names)")
            let newest = try await database.query(
                "SELECT xid_from::text AS f FROM change_partitions ORDER BY xid_from DESC LIMIT 1"
            )[0].decode("f", as: String.self)
            let plan = try await database.query(
                "EXPLAIN SELECT * FROM sync_changes WHERE app_id = 1 AND user_id = 'u' AND xid >= \(newest)::xid8"
            ).map { try $0.decode(0, as: String.self) }.joined(separator: "\n")
            #expect(!plan.contains(" on \(names[0]) "), "\(plan)")
            #expect(plan.contains(" on \(names[1]) "), "\(plan)")
        }
    }

    @Test func anEmptyRangeIsDroppedOnceClosedWithoutExpiringCursors() async throws {
        try await withMigratedClient { database in
            let first = try await ranges(database)
            try #require(first.count == 1)
            try await burnTransactionIds(database, count: 1_500)
            let repository = SyncRepository(database: database)
            // Closed once no running transaction (anywhere in the cluster) can still write to it.
            let dropped = try await eventually(timeout: .seconds(60)) {
                _ = try await repository.maintainChangeLog(retentionDays: 30)
                return try await !ranges(database).contains(first[0])
            }
            #expect(dropped != nil)
            let pruned = try await database.query("SELECT pruned_through::text AS p FROM sync_horizon")[0]
            #expect(try pruned.decode("p", as: String.self) == "0")
        }
    }

    @Test func rowsOfTheUnpartitionedTableAreReadUntilRetentionEmptiesItThenItIsDropped() async throws {
        try await withDatabase { url in
            let logger = TestEnvironment.capturingLogger().logger
            let database = PostgresClient(
                configuration: PostgresConfiguration(conninfo: url, poolSize: 1),
                group: TestEnvironment.eventLoopGroup, logger: logger)
            do {
                // A database of before the partitioning, with a change in it.
                let before = FileManager.default.temporaryDirectory.appendingPathComponent("m-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: before, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: before) }
                for file in try FileManager.default.contentsOfDirectory(atPath: LiveApp.migrationsDirectory)
                where file.hasSuffix(".sql") && file < "0041" {
                    try FileManager.default.copyItem(
                        atPath: LiveApp.migrationsDirectory + "/" + file, toPath: before.path + "/" + file)
                }
                _ = try await Migrator(client: database, directory: before.path, logger: logger).migrate()
                _ = try await database.query(
                    "INSERT INTO changes (app_id, user_id, kind, payload) VALUES (1, 'u', 'profile', '{\"old\":1}')")
                _ = try await Migrator(client: database, directory: LiveApp.migrationsDirectory, logger: logger)
                    .migrate()

                // After the conversion: the old row is where it was and sync reads it with the new ones.
                _ = try await database.query(
                    "INSERT INTO changes (app_id, user_id, kind, payload) VALUES (1, 'u', 'profile', '{\"new\":1}')")
                let payloads = {
                    try await database.query(
                        "SELECT payload FROM sync_changes WHERE app_id = 1 AND user_id = 'u' ORDER BY xid"
                    )
                    .map { try $0.decode("payload", as: String.self) }
                }
                #expect(try await payloads() == ["{\"old\":1}", "{\"new\":1}"])
                let repository = SyncRepository(database: database)
                #expect(try await repository.maintainChangeLog(retentionDays: 30).unpartitionedDropped == false)

                // The old row ages out: deleted, recorded, and the empty old table is dropped.
                _ = try await database.query("UPDATE changes_unpartitioned SET created_at = now() - interval '40 days'")
                let done = try await repository.maintainChangeLog(retentionDays: 30)
                #expect(done.rowsDeleted == 1)
                #expect(done.unpartitionedDropped)
                #expect(
                    try await database.query("SELECT to_regclass('changes_unpartitioned') IS NULL AS gone")[0]
                        .decode("gone", as: Bool.self))
                #expect(try await payloads() == ["{\"new\":1}"])
                let pruned = try await database.query(
                    "SELECT pruned_through > '0'::xid8 AS recorded FROM sync_horizon")[0].decode(
                        "recorded", as: Bool.self)
                #expect(pruned)
                #expect(try await repository.maintainChangeLog(retentionDays: 30).unpartitionedDropped == false)
            } catch {
                await database.shutdown()
                throw error
            }
            await database.shutdown()
        }
    }

    /// Syncs that run while passes add ranges, drop empty ones and drop the old table are never cancelled as
    /// deadlocked. A pass in one transaction (before migrations/0042) held the overflow partition after adding a
    /// range, then asked for the view that syncs lock first, and PostgreSQL cancelled the syncs waiting on it.
    @Test func syncsDuringPassesAreNeverCancelledAsDeadlocked() async throws {
        // One connection for the passes, eight for the syncs.
        try await withMigratedClient(poolSize: 9) { database in
            let repository = SyncRepository(database: database)
            let cursor = try await repository.currentCursor()
            let readersState = ReadersState()
            var steps = SyncRepository.ChangeLogMaintenance.none
            try await withThrowingTaskGroup(of: Void.self) { group in
                for reader in 0..<8 {
                    group.addTask {
                        // Bounded: the passes below end it, or the count does.
                        for _ in 0..<100_000 where !readersState.stop.load(ordering: .relaxed) {
                            do {
                                _ = try await repository.changes(
                                    appId: 1, userId: "u\(reader)", after: cursor, limit: 10)
                                readersState.answered.add(1, ordering: .relaxed)
                            } catch {
                                readersState.failures.withLock { $0.append("\(error)") }
                            }
                        }
                    }
                }
                defer { readersState.stop.store(true, ordering: .relaxed) }
                // Each round makes a range due (and leaves the previous ones empty and closed, to be dropped).
                for _ in 0..<12 {
                    try await burnTransactionIds(database, count: 1_000)
                    let done = try await repository.maintainChangeLog(
                        retentionDays: 30, span: .seconds(1), minimumWidth: 100)
                    steps.partitionsAdded += done.partitionsAdded
                    steps.partitionsDropped += done.partitionsDropped
                    steps.unpartitionedDropped = steps.unpartitionedDropped || done.unpartitionedDropped
                }
                readersState.stop.store(true, ordering: .relaxed)
                try await group.waitForAll()
            }
            #expect(steps.partitionsAdded >= 4 && steps.unpartitionedDropped, "\(steps)")
            #expect(readersState.answered.load(ordering: .relaxed) > 0)
            let failures = readersState.failures.withLock { $0 }
            #expect(failures.isEmpty, "\(failures.count) syncs failed, first: \(failures.prefix(3))")
        }
    }
}

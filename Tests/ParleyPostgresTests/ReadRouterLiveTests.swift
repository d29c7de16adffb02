import ParleyObservability
import ParleyTestSupport
import Testing

@testable import ParleyPostgres

/// `PostgresReadRouter` against the real streaming replica `scripts/test` starts: a write and then a read through
/// the router always sees the write, on the replica when it has replayed it in time, else on the primary.
/// Serialized, and each test holds the replica alone: pausing its replay or stopping it would move other tests'
/// reads to the primary.
@Suite(.serialized) struct ReadRouterLiveTests {
    struct Where: Sendable, Equatable {
        var onReplica: Bool
        var rows: Int
    }

    /// Where a read ran (`pg_is_in_recovery()` on the connection it used) and what it saw.
    static func look(_ client: PostgresClient) async throws -> Where {
        let rows = try await client.query(
            "SELECT pg_is_in_recovery() AS replica, (SELECT count(*) FROM notes) AS rows")
        return Where(onReplica: try rows[0].decode("replica"), rows: try rows[0].decode("rows", as: Int.self))
    }

    /// A fresh database with a `notes` table, a client on the primary and one on the replica (once the replica
    /// has replayed the database's creation), and an admin client on the replica's `postgres` database.
    func withReplicatedDatabase(
        _ body:
            @Sendable (_ primary: PostgresClient, _ replica: PostgresClient, _ replicaAdmin: PostgresClient)
            async throws -> Void
    ) async throws {
        try await TestReplica.exclusively {
            let database = try await TestDatabase.create()
            let logger = TestEnvironment.capturingLogger().logger
            let group = TestEnvironment.eventLoopGroup
            let primary = PostgresClient(
                configuration: PostgresConfiguration(conninfo: database.url, poolSize: 2), group: group, logger: logger)
            let replica = PostgresClient(
                configuration: PostgresConfiguration(
                    conninfo: try TestReplica.url(forPrimary: database.url), poolSize: 2, connectTimeout: .seconds(2)),
                group: group, logger: logger)
            let replicaAdmin = PostgresClient(
                configuration: PostgresConfiguration(conninfo: try TestReplica.adminURL(), poolSize: 1),
                group: group, logger: logger)
            do {
                _ = try await primary.query("CREATE TABLE notes (id bigserial PRIMARY KEY, body text NOT NULL)")
                let replayed = try await eventually(timeout: .seconds(60)) {
                    (try? await replica.query("SELECT 1 FROM notes LIMIT 1")) != nil
                }
                guard replayed != nil else { throw TestDatabase.SetupError(description: "the replica never got notes") }
                try await body(primary, replica, replicaAdmin)
            } catch {
                await replica.shutdown()
                await replicaAdmin.shutdown()
                await primary.shutdown()
                await database.drop()
                throw error
            }
            await replica.shutdown()
            await replicaAdmin.shutdown()
            await primary.shutdown()
            await database.drop()
        }
    }

    /// Pauses the replica's replay for `body`, and resumes it whatever `body` does.
    func withReplayPaused(_ replicaAdmin: PostgresClient, _ body: () async throws -> Void) async throws {
        _ = try await replicaAdmin.query("SELECT pg_wal_replay_pause()")
        do {
            let paused = try await eventually(timeout: .seconds(30)) {
                let rows = try await replicaAdmin.query("SELECT pg_get_wal_replay_pause_state() AS state")
                return try rows[0].decode("state", as: String.self) == "paused"
            }
            #expect(paused != nil)
            try await body()
        } catch {
            _ = try? await replicaAdmin.query("SELECT pg_wal_replay_resume()")
            throw error
        }
        _ = try await replicaAdmin.query("SELECT pg_wal_replay_resume()")
    }

    @Test func eachReadAfterAWriteSeesItOnTheReplica() async throws {
        try await withReplicatedDatabase { primary, replica, _ in
            let metrics = MetricsRegistry()
            // A long wait: the replica replays every test's WAL and lagged seconds behind in loaded runs, and this
            // test is about where reads run once it has caught up.
            let router = PostgresReadRouter(
                primary: primary, replicas: [replica], maxWait: .seconds(60), metrics: metrics)
            for written in 1...3 {
                _ = try await primary.query("INSERT INTO notes (body) VALUES (\("note \(written)"))")
                let seen = try await router.read(Self.look)
                #expect(seen == Where(onReplica: true, rows: written))
            }
            #expect(router.statistics.replicaReads == 3 && router.statistics.primaryReads == 0)
            #expect(metrics.render().contains("parley_db_reads_total{target=\"replica\"} 3"))
        }
    }

    @Test func aReplicaWhoseReplayIsPausedLeavesTheReadToThePrimaryOrServesItOnceResumed() async throws {
        try await withReplicatedDatabase { primary, replica, replicaAdmin in
            let impatient = PostgresReadRouter(primary: primary, replicas: [replica], maxWait: .milliseconds(200))
            let patient = PostgresReadRouter(primary: primary, replicas: [replica], maxWait: .seconds(60))
            try await withReplayPaused(replicaAdmin) {
                _ = try await primary.query("INSERT INTO notes (body) VALUES ('while paused')")
                // The replica cannot have it: the read waits its 200 ms, then the primary answers.
                #expect(try await impatient.read(Self.look) == Where(onReplica: false, rows: 1))
                #expect(impatient.statistics.fallbacks["lagging"] == 1)
                #expect(try await replica.query("SELECT count(*) AS n FROM notes")[0].decode("n", as: Int.self) == 0)
                // A read that may wait longer is still waiting when replay resumes...
                let waiting = Task { try await patient.read(Self.look) }
                #expect(try await eventually(timeout: .seconds(30)) { patient.waitingReads == 1 } != nil)
                _ = try await replicaAdmin.query("SELECT pg_wal_replay_resume()")
                // ...and then runs on the replica, which has the row.
                #expect(try await waiting.value == Where(onReplica: true, rows: 1))
                #expect(patient.statistics.replicaReads == 1 && patient.statistics.primaryReads == 0)
            }
        }
    }

    @Test func aStoppedReplicaLeavesReadsToThePrimaryAndServesAgainOnceBack() async throws {
        try await withReplicatedDatabase { primary, replica, _ in
            let router = PostgresReadRouter(
                primary: primary, replicas: [replica], maxWait: .seconds(60), retryAfter: .milliseconds(100))
            _ = try await primary.query("INSERT INTO notes (body) VALUES ('before')")
            #expect(try await router.read(Self.look) == Where(onReplica: true, rows: 1))
            try await TestReplica.control("stop")
            do {
                _ = try await primary.query("INSERT INTO notes (body) VALUES ('while stopped')")
                for _ in 0..<3 {
                    #expect(try await router.read(Self.look) == Where(onReplica: false, rows: 2))
                }
                let fallbacks = router.statistics.fallbacks
                #expect((fallbacks["replica_down"] ?? 0) + (fallbacks["replica_error"] ?? 0) == 3)
            } catch {
                try? await TestReplica.control("start")
                throw error
            }
            try await TestReplica.control("start")
            // Polled again after the retry interval, it serves once it has replayed what it missed.
            let back = try await eventually(timeout: .seconds(60), interval: .milliseconds(50)) {
                try await router.read(Self.look) == Where(onReplica: true, rows: 2)
            }
            #expect(back != nil)
        }
    }

    @Test func aServerThatIsNotAStandbyIsNeverReadFrom() async throws {
        try await withTestClient { primary, url in
            _ = try await primary.query("CREATE TABLE notes (id bigserial PRIMARY KEY, body text NOT NULL)")
            // The "replica" is the primary itself: pg_last_wal_replay_lsn() is NULL there.
            let notAStandby = PostgresClient(
                configuration: PostgresConfiguration(conninfo: url, poolSize: 1),
                group: TestEnvironment.eventLoopGroup, logger: TestEnvironment.capturingLogger().logger)
            let router = PostgresReadRouter(primary: primary, replicas: [notAStandby], maxWait: .seconds(5))
            _ = try await router.read(Self.look)
            _ = try await router.read(Self.look)
            #expect(router.statistics.replicaReads == 0 && router.statistics.primaryReads == 2)
            #expect(router.statistics.fallbacks["replica_down"] == 2)
            await router.shutdown()
        }
    }

    @Test func withoutReplicasTheRouterHandsOverThePrimaryAndCountsNothing() async throws {
        try await withTestClient { primary, _ in
            _ = try await primary.query("CREATE TABLE notes (id bigserial PRIMARY KEY, body text NOT NULL)")
            let router = PostgresReadRouter(primary: primary)
            #expect(try await router.read(Self.look) == Where(onReplica: false, rows: 0))
            #expect(
                router.statistics
                    == ReadRouterStatistics(
                        primaryReads: 0, replicaReads: 0,
                        fallbacks: [
                            "lagging": 0, "replica_down": 0, "sample_failed": 0, "replica_error": 0,
                        ]))
        }
    }
}

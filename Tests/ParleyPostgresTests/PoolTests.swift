import ParleyNet
import ParleyObservability
import ParleyTestSupport
import Testing

@testable import ParleyPostgres

@Suite struct PoolTests {
    @Test func manyConcurrentQueriesShareAFewConnections() async throws {
        try await withTestClient(poolSize: 4, applicationName: "pool_burst") { client, _ in
            let peak = try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<200 {
                    group.addTask {
                        // Each query counts the pool's backends while it runs.
                        let rows = try await client.query(
                            """
                            SELECT count(*), \(i)::int FROM pg_stat_activity
                            WHERE datname = current_database() AND application_name = 'pool_burst'
                            """)
                        #expect(try rows.first?.decode(1, as: Int.self) == i)
                        return try rows.first!.decode(0, as: Int.self)
                    }
                }
                var peak = 0
                for try await seen in group { peak = max(peak, seen) }
                return peak
            }
            #expect(peak >= 1 && peak <= 4)
            let stats = client.poolStatistics
            #expect(stats.total <= 4 && stats.total >= 1)
            #expect(stats.inUse == 0 && stats.waiting == 0)
            // A connection the burst asked for may still be opening (counted in `total`, not yet idle) when the
            // last query returns, on a loaded machine: once it is open, every connection is idle.
            #expect(
                try await eventually {
                    let settled = client.poolStatistics
                    return settled.idle == settled.total && settled.total <= 4
                } != nil)
        }
    }

    @Test func queriesFromALoopTaskUseThatLoopsConnections() async throws {
        try await withTestClient(poolSize: 2) { client, _ in
            let loop = TestEnvironment.eventLoopGroup.loops[1]
            let stayedOnLoop = try await Task(executorPreference: loop) {
                var onLoop = true
                for _ in 0..<20 {
                    _ = try await client.query("SELECT 1")
                    onLoop = onLoop && loop.inEventLoop
                }
                return onLoop
            }.value
            #expect(stayedOnLoop)
            #expect(client.pools[1].counters.snapshot.total == 1)
            #expect(client.pools[0].counters.snapshot.total == 0)
        }
    }

    @Test func acquireTimesOutWhenEveryConnectionIsHeld() async throws {
        // poolSize 2 over two loops: one connection per loop. Pin both tasks to loop 0.
        try await withTestClient(poolSize: 2, acquireTimeout: .milliseconds(200)) { client, _ in
            let loop = TestEnvironment.eventLoopGroup.loops[0]
            // Open loop 0's connection first: under a loaded test run connecting can take longer than 200 ms
            // (a waiter that times out does not stop the connect; the connection then waits idle).
            #expect(
                try await eventually {
                    await Task(executorPreference: loop) { (try? await client.query("SELECT 1")) != nil }.value
                } != nil)
            let holding = SharedCounter()
            let released = SharedCounter()
            // Holds the only connection until the test says so (bounded at 30 s), whatever the machine's load.
            let holder = Task(executorPreference: loop) {
                try await client.withConnection { connection in
                    _ = try await connection.query("SELECT 1")
                    holding.increment()
                    for _ in 0..<3000 where released.value == 0 { try await Task.sleep(for: .milliseconds(10)) }
                }
            }
            #expect(try await eventually { holding.value == 1 } != nil)
            let started = ContinuousClock.now
            let outcome = await Task(executorPreference: loop) { () async -> PostgresError? in
                do throws(PostgresError) {
                    _ = try await client.query("SELECT 1")
                    return nil
                } catch {
                    return error
                }
            }.value
            let elapsed = ContinuousClock.now - started
            #expect(outcome?.kind == .timeout)
            // It waited for the acquire timeout (200 ms), and no less; the upper end is the machine's load.
            #expect(elapsed >= .milliseconds(190), "\(elapsed)")
            released.increment()
            try await holder.value
            // Once released, the connection serves again.
            _ = try await Task(executorPreference: loop) { try await client.query("SELECT 1") }.value
        }
    }

    @Test func refusedConnectionFailsFastAsUnavailable() async throws {
        // Port 1 on loopback: nothing listens, connect() is refused at once.
        // A long acquire timeout, so "fails fast" cannot be mistaken for "timed out waiting".
        var configuration = PostgresConfiguration(conninfo: "postgresql://parley@127.0.0.1:1/postgres", poolSize: 4)
        configuration.acquireTimeout = .seconds(60)
        let (logger, sink) = TestEnvironment.capturingLogger()
        let client = PostgresClient(configuration: configuration, group: TestEnvironment.eventLoopGroup, logger: logger)
        for _ in 0..<3 {
            let error = await #expect(throws: PostgresError.self) { try await client.ping() }
            // `.unavailable`, the refused connect itself: waiting for a connection until the acquire timeout would
            // be `.timeout`. (No wall-clock bound: it would measure the machine's load.)
            #expect(error?.kind == .unavailable)
        }
        let concurrent = await withTaskGroup(of: PostgresError.Kind?.self) { group in
            for _ in 0..<20 {
                group.addTask { () async -> PostgresError.Kind? in
                    do throws(PostgresError) { _ = try await client.query("SELECT 1"); return nil } catch {
                        return error.kind
                    }
                }
            }
            return await group.reduce(into: [PostgresError.Kind?]()) { $0.append($1) }
        }
        #expect(concurrent.allSatisfy { $0 == .unavailable })
        #expect(client.poolStatistics == PostgresPoolStatistics())
        #expect(sink.capturedText.contains("database connection failed"))
        #expect(!sink.capturedText.contains("password"))
        await client.shutdown()
    }

    @Test func terminatedBackendsAreReplaced() async throws {
        try await withTestClient(poolSize: 4, applicationName: "pool_recovery") { client, url in
            try await withAdminClient(url: url) { admin in
                var previous: Set<Int> = []
                // Several rounds, querying right after the termination (not waiting for the backends to exit):
                // idle connections whose backend is gone must be noticed and replaced, not fail a query.
                for round in 0..<10 {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for _ in 0..<8 { group.addTask { _ = try await client.query("SELECT pg_sleep(0.005)") } }
                        try await group.waitForAll()
                    }
                    let before = Set(try await backendPIDs(of: "pool_recovery", using: admin))
                    #expect(!before.isEmpty && before.count <= 4)
                    #expect(before.isDisjoint(with: previous), "round \(round): the pool kept terminated backends")
                    _ = try await admin.query(
                        """
                        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                        WHERE datname = current_database() AND application_name = 'pool_recovery'
                        """)
                    for i in 0..<5 {
                        let rows = try await client.query("SELECT \(i)::int")
                        #expect(try rows.first?.decode(0, as: Int.self) == i)
                    }
                    previous = before
                }
                #expect(client.poolStatistics.total <= 4)
            }
        }
    }

    @Test func queryWhoseBackendIsKilledFailsUnavailableAndThePoolRecovers() async throws {
        try await withTestClient(poolSize: 2, applicationName: "pool_kill") { client, url in
            try await withAdminClient(url: url) { admin in
                let victim = Task { try await client.query("SELECT pg_sleep(60)") }
                #expect(
                    try await eventually {
                        let rows = try await admin.query(
                            """
                            SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pool_kill' AND query LIKE '%pg_sleep(60)%'
                              AND state = 'active'
                            """)
                        return try rows.first?.decode(0, as: Int.self) == 1
                    } != nil)
                _ = try await admin.query(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE application_name = 'pool_kill' AND query LIKE '%pg_sleep(60)%'
                    """)
                // The query fails when its backend dies (its 60 s sleep would end in a row, not an error).
                let result = await victim.result
                guard case .failure(let error as PostgresError) = result else {
                    Issue.record("expected the killed query to fail, got \(result)")
                    return
                }
                #expect(error.kind == .unavailable)
                #expect(error.sqlState == "57P01")
                for _ in 0..<5 { _ = try await client.query("SELECT 1") }
                #expect(client.poolStatistics.total <= 2)
            }
        }
    }

    @Test func shutdownClosesEveryConnectionAndFailsLaterQueriesWithClosed() async throws {
        let database = try await TestDatabase.create()
        let url = database.url + "?application_name=pool_shutdown"
        let client = PostgresClient(
            configuration: PostgresConfiguration(conninfo: url, poolSize: 4),
            group: TestEnvironment.eventLoopGroup, logger: TestEnvironment.capturingLogger().logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { _ = try await client.query("SELECT pg_sleep(0.01)") } }
            try await group.waitForAll()
        }
        // Keep the subscription: a dropped stream unsubscribes (UNLISTEN), and if that lands after the LISTEN
        // completed, waitUntilListening would wait for a channel nobody listens to any more.
        let subscription = client.listen("shutdown_channel")
        #expect(await client.waitUntilListening("shutdown_channel", timeout: .seconds(30)))
        try await withAdminClient(url: url) { (admin: PostgresClient) async throws -> Void in
            #expect(try await backendPIDs(of: "pool_shutdown", using: admin).count >= 2)
            await client.shutdown()
            // PQfinish ran for each: the server sees the sessions end.
            #expect(try await eventually { try await backendPIDs(of: "pool_shutdown", using: admin).isEmpty } != nil)
        }
        let error = await #expect(throws: PostgresError.self) { try await client.query("SELECT 1") }
        #expect(error?.kind == .closed)
        #expect(client.poolStatistics == PostgresPoolStatistics())
        withExtendedLifetime(subscription) {}
        await database.drop()
    }

    @Test func metricsExposePoolGauges() async throws {
        let database = try await TestDatabase.create()
        let metrics = MetricsRegistry()
        let client = PostgresClient(
            configuration: PostgresConfiguration(conninfo: database.url, poolSize: 2),
            group: TestEnvironment.eventLoopGroup, logger: TestEnvironment.capturingLogger().logger,
            metrics: metrics)
        _ = try await client.query("SELECT 1")
        let text = metrics.render()
        #expect(text.contains("parley_db_pool_connections{state=\"idle\"} 1"))
        #expect(text.contains("parley_db_pool_connections{state=\"in_use\"} 0"))
        #expect(text.contains("parley_db_pool_waiting 0"))
        await client.shutdown()
        await database.drop()
    }
}

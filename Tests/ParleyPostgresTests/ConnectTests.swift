import ParleyNet
import ParleyTestSupport
import Testing

@testable import ParleyPostgres

@Suite struct ConnectTests {
    @Test func resolverOnlyLooksUpHostNames() {
        #expect(!HostResolver(conninfo: "postgresql://u@127.0.0.1:5432/db").needsResolution)
        #expect(!HostResolver(conninfo: "postgresql://u@[::1]:5432/db").needsResolution)
        #expect(!HostResolver(conninfo: "host=/var/run/postgresql dbname=x").needsResolution)
        #expect(!HostResolver(conninfo: "host=db.example hostaddr=10.0.0.1 dbname=x").needsResolution)
        #expect(HostResolver(conninfo: "postgresql://u@localhost:5432/db").needsResolution)
        #expect(HostResolver(conninfo: "host=127.0.0.1,db.internal port=5432,5433").needsResolution)
    }

    @Test func connectsThroughAHostName() async throws {
        let database = try await TestDatabase.create()
        // "localhost" usually resolves to ::1 and 127.0.0.1; the test cluster listens on 127.0.0.1 only, so this
        // also checks that every resolved address is tried in turn, as libpq would.
        let url = database.url.replacing("127.0.0.1", with: "localhost")
        let client = PostgresClient(
            configuration: PostgresConfiguration(conninfo: url, poolSize: 2),
            group: TestEnvironment.eventLoopGroup, logger: TestEnvironment.capturingLogger().logger)
        let rows = try await client.query("SELECT current_database()")
        #expect(try rows.first?.decode(0, as: String.self) == url.split(separator: "/").last.map(String.init))
        let stream = client.listen("through_name")
        #expect(await client.waitUntilListening("through_name", timeout: .seconds(30)))
        try await client.notify("through_name", payload: "hi")
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == .notification(channel: "through_name", payload: "hi"))
        await client.shutdown()
        await database.drop()
    }

    @Test func unresolvableHostFailsAsUnavailable() async throws {
        let configuration = PostgresConfiguration(
            conninfo: "postgresql://parley@no-such-host.invalid:5432/postgres",
            poolSize: 2, connectTimeout: .seconds(2))
        let client = PostgresClient(
            configuration: configuration, group: TestEnvironment.eventLoopGroup,
            logger: TestEnvironment.capturingLogger().logger)
        let error = await #expect(throws: PostgresError.self) { try await client.ping() }
        // The resolution failure itself, not a wait for a connection that ends in `.timeout`. (No wall-clock bound:
        // on a loaded machine the resolver's thread may wait its turn for seconds.)
        #expect(error?.kind == .unavailable)
        await client.shutdown()
    }

    @Test func wrongPasswordOrUnknownDatabaseIsUnavailable() async throws {
        let admin = try TestDatabase.adminURL()
        let url = TestDatabase.databaseURL(admin, replacingDatabaseWith: "no_such_database_here")
        let client = PostgresClient(
            configuration: PostgresConfiguration(conninfo: url, poolSize: 2),
            group: TestEnvironment.eventLoopGroup, logger: TestEnvironment.capturingLogger().logger)
        let error = await #expect(throws: PostgresError.self) { try await client.query("SELECT 1") }
        #expect(error?.kind == .unavailable)
        #expect(error?.message.contains("no_such_database_here") == true)
        await client.shutdown()
    }

    @Test func databaseURLReplacement() {
        #expect(
            TestDatabase.databaseURL("postgresql://u@h:1/postgres", replacingDatabaseWith: "x")
                == "postgresql://u@h:1/x")
        #expect(TestDatabase.databaseURL("postgresql://u@h:1", replacingDatabaseWith: "x") == "postgresql://u@h:1/x")
        #expect(
            TestDatabase.databaseURL("postgres://u@h/postgres?sslmode=disable", replacingDatabaseWith: "x")
                == "postgres://u@h/x?sslmode=disable")
        #expect(
            TestDatabase.databaseURL("host=h dbname=postgres", replacingDatabaseWith: "x")
                == "host=h dbname=postgres dbname=x")
    }
}

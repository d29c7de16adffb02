import ParleyNet
import ParleyObservability
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyPostgres

/// A client on a fresh database that is dropped afterwards.
func withTestClient<T: Sendable>(
    poolSize: Int = 4,
    acquireTimeout: Duration = .seconds(5),
    statementCacheCapacity: Int = 256,
    applicationName: String = "parley_test",
    _ body: (PostgresClient, _ url: String) async throws -> T
) async throws -> T {
    let database = try await TestDatabase.create()
    let url = database.url + (database.url.contains("?") ? "&" : "?") + "application_name=\(applicationName)"
    let configuration = PostgresConfiguration(
        conninfo: url, poolSize: poolSize, acquireTimeout: acquireTimeout,
        statementCacheCapacity: statementCacheCapacity)
    let client = PostgresClient(
        configuration: configuration, group: TestEnvironment.eventLoopGroup,
        logger: TestEnvironment.capturingLogger().logger)
    do {
        let result = try await body(client, url)
        await client.shutdown()
        await database.drop()
        return result
    } catch {
        await client.shutdown()
        await database.drop()
        throw error
    }
}

/// A second client on the same database, for administrative statements (terminating backends...).
func withAdminClient<T: Sendable>(url: String, _ body: (PostgresClient) async throws -> T) async throws -> T {
    try await withPostgresClient(
        PostgresConfiguration(conninfo: url.replacingApplicationName("parley_admin"), poolSize: 2), body)
}

extension String {
    func replacingApplicationName(_ name: String) -> String {
        guard let range = range(of: "application_name=") else { return self }
        return String(self[..<range.lowerBound]) + "application_name=\(name)"
    }
}

/// Backends of the test client (by application name) in the current database.
func backendPIDs(of applicationName: String, using admin: PostgresClient) async throws -> [Int] {
    let rows = try await admin.query(
        """
        SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = \(applicationName) AND pid <> pg_backend_pid()
        """)
    return try rows.map { row throws(PostgresError) in try row.decode(0, as: Int.self) }
}

/// A counter tasks can share.
final class SharedCounter: Sendable {
    private let atomic = Atomic<Int>(0)
    @discardableResult
    func increment() -> Int { atomic.add(1, ordering: .relaxed).newValue }
    var value: Int { atomic.load(ordering: .relaxed) }
}

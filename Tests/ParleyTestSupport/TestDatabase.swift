import Glibc
import ParleyNet
import ParleyObservability
import ParleyPostgres
import Synchronization

/// A fresh database per test (or suite) on the cluster named by `PARLEY_TEST_DATABASE_URL`.
///
/// `scripts/test` starts a throwaway PostgreSQL cluster and exports the variable (an admin URL on the
/// `postgres` database). Without it, database tests fail with an explanation instead of silently skipping.
public enum TestDatabase {
    public struct SetupError: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    public static let environmentVariable = "PARLEY_TEST_DATABASE_URL"

    /// The admin URL, or an error that says how to get one.
    public static func adminURL() throws -> String {
        guard let raw = getenv(environmentVariable), case let url = String(cString: raw), !url.isEmpty else {
            throw SetupError(
                description: """
                    \(environmentVariable) is not set. Run the tests through scripts/test, which starts a throwaway \
                    PostgreSQL cluster and sets it (e.g. `scripts/test --filter ParleyPostgresTests`), or export an admin \
                    URL such as postgresql://parley@127.0.0.1:5432/postgres for a cluster you run yourself.
                    """)
        }
        return url
    }

    private static let counter = Atomic<Int>(0)
    /// Suites start together: unbounded, their CREATE DATABASE statements (each a connection of its own, each copying
    /// the template) queue inside PostgreSQL until connecting alone outlasts the pool's acquire timeout on a loaded
    /// machine. A few at a time, the rest wait here, where waiting has no deadline.
    private static let gate = CreationGate(permits: 2)

    /// Creates a uniquely named database and returns its URL and a function that drops it (forcibly:
    /// connections still open are terminated).
    public static func create() async throws -> (url: String, drop: @Sendable () async -> Void) {
        let admin = try adminURL()
        let name =
            "parley_test_\(getpid())_\(counter.add(1, ordering: .relaxed).newValue)_\(UInt32.random(in: 0...UInt32.max))"
        try await gate.run {
            try await withAdminClient(admin) { client in
                try await client.withConnection { connection in
                    try await connection.execute(unsafeSQL: "CREATE DATABASE \(name)")
                }
            }
        }
        let url = databaseURL(admin, replacingDatabaseWith: name)
        let drop: @Sendable () async -> Void = {
            try? await gate.run {
                try await withAdminClient(admin) { client in
                    try await client.withConnection { connection in
                        try await connection.execute(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
                    }
                }
            }
        }
        return (url, drop)
    }

    /// `admin` with its database replaced by `database`; works for URIs and for `key=value` strings.
    public static func databaseURL(_ admin: String, replacingDatabaseWith database: String) -> String {
        guard let scheme = admin.range(of: "://") else {
            return admin + " dbname=\(database)" // key=value: a later keyword wins
        }
        let afterScheme = admin[scheme.upperBound...]
        let query = afterScheme.firstIndex(of: "?")
        let authority = afterScheme[..<(query ?? afterScheme.endIndex)]
        let hostPart = authority.firstIndex(of: "/").map { authority[..<$0] } ?? authority
        return String(admin[..<scheme.upperBound]) + hostPart + "/" + database
            + (query.map { String(afterScheme[$0...]) } ?? "")
    }

    private static func withAdminClient(_ url: String, _ body: (PostgresClient) async throws -> Void) async throws {
        try await withPostgresClient(
            PostgresConfiguration(conninfo: url, poolSize: 1), logger: Logger(sink: LogSink(capturingAt: .error)), body)
    }
}

/// At most `permits` bodies at a time; the others wait in order.
actor CreationGate {
    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(permits: Int) {
        available = permits
    }

    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        if available > 0 {
            available -= 1
        } else {
            await withCheckedContinuation { waiters.append($0) }
        }
        defer {
            if waiters.isEmpty { available += 1 } else { waiters.removeFirst().resume() }
        }
        return try await body()
    }
}

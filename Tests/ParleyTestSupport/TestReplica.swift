import Glibc

/// The streaming replica `scripts/test` starts beside the test cluster (`pg_basebackup -R`, a hot standby):
/// `PARLEY_TEST_REPLICA_URL` is its admin URL, `PARLEY_TEST_REPLICA_DIR` its directory. Every database a test
/// creates on the primary appears on it once replayed.
public enum TestReplica {
    public static let urlVariable = "PARLEY_TEST_REPLICA_URL"
    public static let directoryVariable = "PARLEY_TEST_REPLICA_DIR"

    /// The replica's admin URL, or an error that says how to get one.
    public static func adminURL() throws -> String {
        guard let raw = getenv(urlVariable), case let url = String(cString: raw), !url.isEmpty else {
            throw TestDatabase.SetupError(
                description: """
                    \(urlVariable) is not set. Run the tests through scripts/test, which starts a streaming replica \
                    of its throwaway cluster (pg_replica_start in scripts/lib/common.sh) and sets it.
                    """)
        }
        return url
    }

    /// The replica's URL for the database `primaryURL` (a URL from `TestDatabase.create`) names.
    public static func url(forPrimary primaryURL: String) throws -> String {
        guard let scheme = primaryURL.range(of: "://"),
            let slash = primaryURL[scheme.upperBound...].firstIndex(of: "/")
        else { throw TestDatabase.SetupError(description: "not a database URL: \(primaryURL)") }
        let rest = primaryURL[primaryURL.index(after: slash)...]
        let name = rest.firstIndex(of: "?").map { rest[..<$0] } ?? rest
        return TestDatabase.databaseURL(try adminURL(), replacingDatabaseWith: String(name))
    }

    private static let gate = CreationGate(permits: 1)

    /// Runs `body` while no other test uses the replica: tests pause its replay and stop it, which would make
    /// another test's reads fall back to the primary.
    public static func exclusively<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await gate.run(body)
    }

    /// `scripts/lib/pgctl ACTION` on the replica (`start` starts it again with its settings, `stop` is a fast
    /// shutdown); throws when it fails.
    public static func control(_ action: String) async throws {
        guard let control = getenv("PARLEY_TEST_PG_CTL").map({ String(cString: $0) }),
            let directory = getenv(directoryVariable).map({ String(cString: $0) })
        else {
            throw TestDatabase.SetupError(
                description:
                    "PARLEY_TEST_PG_CTL and \(directoryVariable) are not set: run the tests through scripts/test")
        }
        let output = "/tmp/parley-pgctl-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
        defer { unlink(output) }
        let process = try ChildProcess(executable: control, arguments: [action, directory], outputPath: output)
        let status = await process.waitForExit()
        guard status == 0 else {
            throw TestDatabase.SetupError(description: "pgctl \(action) failed (\(status)): \(process.output())")
        }
    }
}

import ParleyObservability

/// Applies `NNNN_name.sql` files from a directory in version order, each exactly once, recording them in
/// `schema_migrations(version, name, checksum, applied_at)`.
///
/// A run holds a session advisory lock on one connection, so concurrent migrators (several replicas
/// starting at once) serialize and the later ones find nothing to do. Each migration runs in its own
/// transaction with its `schema_migrations` row, so a failing file leaves no trace. Before applying
/// anything every applied migration's checksum is compared with its file: applied files are immutable.
public struct Migrator: Sendable {
    /// `pg_advisory_lock` key for migrations ("parley" in ASCII).
    public static let advisoryLockKey: Int64 = 0x7061_726C_6579

    let client: PostgresClient
    let directory: String
    let logger: Logger

    public init(client: PostgresClient, directory: String, logger: Logger) {
        self.client = client
        self.directory = directory
        self.logger = logger.with("component", "migrator")
    }

    struct AppliedMigration {
        let version: Int
        let name: String
        let checksum: String
    }

    /// File names of the applied and the pending migrations, in order. Throws when files are malformed or
    /// an applied file was changed or removed.
    public func status() async throws -> (applied: [String], pending: [String]) {
        let files = try MigrationFile.load(directory: directory)
        let applied = try await client.withConnection { connection in
            let exists = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL")
            guard try exists.first?.decode(0, as: Bool.self) == true else { return [AppliedMigration]() }
            return try await Self.readApplied(connection)
        }
        try Self.verify(applied: applied, files: files)
        let appliedVersions = Set(applied.map(\.version))
        return (
            files.filter { appliedVersions.contains($0.version) }.map(\.name),
            files.filter { !appliedVersions.contains($0.version) }.map(\.name)
        )
    }

    /// Applies every pending migration; returns the file names applied by this call (empty when up to date).
    @discardableResult
    public func migrate() async throws -> [String] {
        let files = try MigrationFile.load(directory: directory)
        let logger = self.logger
        return try await client.withConnection { connection in
            _ = try await connection.query("SELECT pg_advisory_lock(\(Self.advisoryLockKey))")
            do {
                let applied = try await Self.applyPending(files, on: connection, logger: logger)
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))")
                return applied
            } catch {
                // If the connection is gone the server released the lock with the session.
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))")
                throw error
            }
        }
    }

    private static func applyPending(
        _ files: [MigrationFile], on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [String] {
        try await connection.execute(
            unsafeSQL: """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY,
                    name text NOT NULL,
                    checksum text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
        let applied = try await readApplied(connection)
        try verify(applied: applied, files: files)
        let appliedVersions = Set(applied.map(\.version))
        var appliedNow: [String] = []
        for file in files where !appliedVersions.contains(file.version) {
            do {
                try await connection.execute(unsafeSQL: "BEGIN")
                try await connection.execute(unsafeSQL: file.sql)
                _ = try await connection.query(
                    """
                    INSERT INTO schema_migrations (version, name, checksum)
                    VALUES (\(Int32(file.version)), \(file.name), \(file.checksum))
                    """)
                try await connection.execute(unsafeSQL: "COMMIT")
            } catch {
                try? await connection.execute(unsafeSQL: "ROLLBACK")
                throw MigrationError.failed(name: file.name, sqlState: error.sqlState, message: error.message)
            }
            logger.info("migration applied", ["name": .string(file.name)])
            appliedNow.append(file.name)
        }
        return appliedNow
    }

    private static func readApplied(_ connection: PostgresConnection) async throws -> [AppliedMigration] {
        let rows = try await connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version")
        return try rows.map { row throws(PostgresError) in
            AppliedMigration(
                version: try row.decode(0, as: Int.self), name: try row.decode(1, as: String.self),
                checksum: try row.decode(2, as: String.self))
        }
    }

    static func verify(applied: [AppliedMigration], files: [MigrationFile]) throws(MigrationError) {
        var byVersion: [Int: MigrationFile] = [:]
        for file in files { byVersion[file.version] = file }
        for migration in applied {
            guard let file = byVersion[migration.version] else {
                throw .missingFile(version: migration.version, name: migration.name)
            }
            guard file.checksum == migration.checksum else {
                throw .checksumMismatch(name: file.name, expected: migration.checksum, actual: file.checksum)
            }
        }
    }
}

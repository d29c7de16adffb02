import Foundation
import ParleyObservability
import ParleyTestSupport
import Testing

@testable import ParleyPostgres

/// A temporary directory of migration files.
final class MigrationDirectory: Sendable {
    let path: String

    init(_ files: [String: String]) throws {
        path = NSTemporaryDirectory() + "parley-migrations-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (name, sql) in files { try write(name, sql) }
    }

    func write(_ name: String, _ sql: String) throws {
        try sql.write(toFile: path + "/" + name, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

@Suite struct MigratorTests {
    static let standard = [
        "0001_counter.sql": "CREATE TABLE counter (n int NOT NULL); INSERT INTO counter VALUES (0);",
        "0002_bump.sql": "UPDATE counter SET n = n + 1;",
        "0010_items.sql": "CREATE TABLE items (id bigserial PRIMARY KEY, counter_at_creation int NOT NULL DEFAULT 0);",
        "README.md": "not a migration",
    ]

    func migrator(_ client: PostgresClient, _ directory: MigrationDirectory) -> Migrator {
        Migrator(client: client, directory: directory.path, logger: TestEnvironment.capturingLogger().logger)
    }

    @Test func appliesInOrderThenNothing() async throws {
        let directory = try MigrationDirectory(Self.standard)
        try await withTestClient { client, _ in
            let migrator = migrator(client, directory)
            let before = try await migrator.status()
            #expect(before.applied.isEmpty)
            #expect(before.pending == ["0001_counter.sql", "0002_bump.sql", "0010_items.sql"])
            #expect(try await migrator.migrate() == ["0001_counter.sql", "0002_bump.sql", "0010_items.sql"])
            #expect(try await migrator.migrate() == [])
            let after = try await migrator.status()
            #expect(after.applied == ["0001_counter.sql", "0002_bump.sql", "0010_items.sql"] && after.pending.isEmpty)
            let rows = try await client.query("SELECT n FROM counter")
            #expect(try rows.first?.decode(0, as: Int.self) == 1)
            let recorded = try await client.query(
                "SELECT version, name, length(checksum) FROM schema_migrations ORDER BY version")
            #expect(try recorded.map { row throws(PostgresError) in try row.decode(0, as: Int.self) } == [1, 2, 10])
            #expect(try recorded[0].decode(2, as: Int.self) == 64)

            try directory.write("0011_more.sql", "UPDATE counter SET n = n + 10;")
            #expect(try await migrator.migrate() == ["0011_more.sql"])
        }
    }

    @Test func concurrentMigratorsApplyEachFileOnce() async throws {
        let directory = try MigrationDirectory(Self.standard)
        try await withTestClient(poolSize: 8) { client, url in
            // A second client too, as a second replica would have. Both pools have a connection per migrator on
            // every loop: a migrator waits on the others' advisory lock while holding its connection, so a smaller
            // pool would make the test about acquire timeouts on a slow machine instead of about migrations.
            let other = PostgresClient(
                configuration: PostgresConfiguration(conninfo: url, poolSize: 8),
                group: TestEnvironment.eventLoopGroup, logger: TestEnvironment.capturingLogger().logger)
            let results = try await withThrowingTaskGroup(of: [String].self) { group in
                for i in 0..<4 {
                    let target = i % 2 == 0 ? client : other
                    group.addTask {
                        try await Migrator(
                            client: target, directory: directory.path,
                            logger: TestEnvironment.capturingLogger().logger
                        ).migrate()
                    }
                }
                return try await group.reduce(into: [[String]]()) { $0.append($1) }
            }
            await other.shutdown()
            #expect(results.filter { !$0.isEmpty }.count == 1)
            #expect(results.flatMap { $0 }.sorted() == ["0001_counter.sql", "0002_bump.sql", "0010_items.sql"])
            let rows = try await client.query("SELECT n FROM counter")
            #expect(try rows.first?.decode(0, as: Int.self) == 1)
        }
    }

    @Test func editedAppliedFileIsAChecksumMismatch() async throws {
        let directory = try MigrationDirectory(Self.standard)
        try await withTestClient { client, _ in
            try await migrator(client, directory).migrate()
            try directory.write("0002_bump.sql", "UPDATE counter SET n = n + 2;")
            try directory.write("0020_new.sql", "UPDATE counter SET n = 100;")
            for attempt in 0..<2 {
                let error = await #expect(throws: MigrationError.self) {
                    if attempt == 0 {
                        try await migrator(client, directory).migrate()
                    } else {
                        _ = try await migrator(client, directory).status()
                    }
                }
                guard case .checksumMismatch(let name, let expected, let actual) = error else {
                    Issue.record("expected checksumMismatch, got \(String(describing: error))")
                    continue
                }
                #expect(name == "0002_bump.sql")
                #expect(expected != actual && expected.count == 64)
                #expect(error?.description.contains("checksum") == true)
                #expect(error?.description.contains("new migration") == true)
            }
            // Nothing after the mismatch ran.
            let rows = try await client.query("SELECT n FROM counter")
            #expect(try rows.first?.decode(0, as: Int.self) == 1)
        }
    }

    @Test func appliedMigrationWithoutFileIsAnError() async throws {
        let directory = try MigrationDirectory(Self.standard)
        try await withTestClient { client, _ in
            try await migrator(client, directory).migrate()
            try FileManager.default.removeItem(atPath: directory.path + "/0010_items.sql")
            let error = await #expect(throws: MigrationError.self) { try await migrator(client, directory).migrate() }
            #expect(error == .missingFile(version: 10, name: "0010_items.sql"))
        }
    }

    @Test(arguments: [
        "1_short.sql", "0003-dash.sql", "0003_.sql", "abcd_name.sql", "0003_has space.sql", "0000_zero.sql",
    ])
    func malformedFileNameIsRejected(name: String) async throws {
        let directory = try MigrationDirectory(["0001_ok.sql": "SELECT 1;", name: "SELECT 1;"])
        #expect(throws: MigrationError.invalidFileName(name)) { try MigrationFile.load(directory: directory.path) }
    }

    @Test func duplicateVersionIsRejected() throws {
        let directory = try MigrationDirectory(["0001_a.sql": "SELECT 1;", "0001_b.sql": "SELECT 2;"])
        #expect(throws: MigrationError.duplicateVersion(1, files: ["0001_a.sql", "0001_b.sql"])) {
            try MigrationFile.load(directory: directory.path)
        }
    }

    @Test func badNameFailsMigrateBeforeTouchingTheDatabase() async throws {
        let directory = try MigrationDirectory(["0001_ok.sql": "CREATE TABLE ok (n int);", "02_bad.sql": "SELECT 1;"])
        try await withTestClient { client, _ in
            let error = await #expect(throws: MigrationError.self) { try await migrator(client, directory).migrate() }
            #expect(error == .invalidFileName("02_bad.sql"))
            let rows = try await client.query("SELECT to_regclass('schema_migrations') IS NULL")
            #expect(try rows.first?.decode(0, as: Bool.self) == true)
        }
    }

    @Test func failingMigrationRollsBackAndRecordsNothing() async throws {
        let directory = try MigrationDirectory([
            "0001_ok.sql": "CREATE TABLE ok (n int);",
            "0002_broken.sql": "CREATE TABLE half (n int); INSERT INTO ok VALUES (1); SELEKT nonsense;",
            "0003_later.sql": "CREATE TABLE later (n int);",
        ])
        try await withTestClient { client, _ in
            let error = await #expect(throws: MigrationError.self) { try await migrator(client, directory).migrate() }
            guard case .failed(let name, let sqlState, _) = error else {
                Issue.record("expected .failed, got \(String(describing: error))")
                return
            }
            #expect(name == "0002_broken.sql")
            #expect(sqlState == "42601")
            #expect(error?.description.contains("0002_broken.sql") == true)
            #expect(error?.description.contains("syntax error") == true)
            let rows = try await client.query(
                """
                SELECT (SELECT count(*) FROM schema_migrations), to_regclass('half') IS NULL, to_regclass('later') IS NULL,
                       (SELECT count(*) FROM ok)
                """)
            let row = try #require(rows.first)
            #expect(try row.decode(0, as: Int.self) == 1)
            #expect(try row.decode(1, as: Bool.self))
            #expect(try row.decode(2, as: Bool.self))
            #expect(try row.decode(3, as: Int.self) == 0)
            // The lock was released: fixing the file lets a later run continue.
            try directory.write("0002_broken.sql", "CREATE TABLE half (n int);")
            #expect(try await migrator(client, directory).migrate() == ["0002_broken.sql", "0003_later.sql"])
        }
    }

    @Test func repositoryMigrationsApply() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        try await withTestClient { client, _ in
            let migrator = Migrator(
                client: client, directory: root.path + "/migrations",
                logger: TestEnvironment.capturingLogger().logger)
            let applied = try await migrator.migrate()
            #expect(applied.first == "0001_init.sql")
            let rows = try await client.query("SELECT count(*) FROM parley_meta WHERE key = 'installed_at'")
            #expect(try rows.first?.decode(0, as: Int.self) == 1)
        }
    }
}

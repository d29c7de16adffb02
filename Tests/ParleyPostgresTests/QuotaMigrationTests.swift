import Foundation
import ParleyTestSupport
import Testing

@testable import ParleyPostgres

/// migrations/0016_quotas.sql on a database that already holds files: the usage counters start from what is stored.
@Suite struct QuotaMigrationTests {
    static let repositoryMigrations = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("migrations").path

    @Test func backfillsUsageFromTheStoredRows() async throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.repositoryMigrations).filter {
            $0.hasSuffix(".sql")
        }.sorted()
        let quotas = try #require(names.first { $0.hasPrefix("0016_") })
        var before: [String: String] = [:]
        for name in names where name < quotas {
            before[name] = try String(contentsOfFile: Self.repositoryMigrations + "/" + name, encoding: .utf8)
        }
        let directory = try MigrationDirectory(before)
        try await withTestClient { client, _ in
            let migrator = Migrator(
                client: client, directory: directory.path, logger: TestEnvironment.capturingLogger().logger)
            _ = try await migrator.migrate()
            _ = try await client.query(
                """
                INSERT INTO apps (app_key, name, secret_ciphertext) VALUES ('ak_a', 'a', '\\x00'), ('ak_b', 'b', '\\x00')
                """)
            let apps = try await client.query("SELECT id FROM apps ORDER BY id").map {
                try $0.decode(0, as: Int64.self)
            }
            let (a, b) = (apps[0], apps[1])
            let sha1 = String(repeating: "1", count: 64)
            let sha2 = String(repeating: "2", count: 64)
            _ = try await client.query(
                """
                INSERT INTO file_blobs (app_id, sha256, size, storage_key)
                VALUES (\(a), \(sha1), 100, 'k1'), (\(a), \(sha2), 30, 'k2'), (\(b), \(sha1), 100, 'k3')
                """)
            _ = try await client.query(
                """
                INSERT INTO files (object_key, app_id, owner_id, sha256, size, mime_type, ext, name)
                VALUES ('f1', \(a), 'u1', \(sha1), 100, 'x/y', 'bin', 'n'), ('f2', \(a), 'u1', \(sha1), 100, 'x/y', 'bin', 'n'),
                       ('f3', \(a), 'u2', \(sha2), 30, 'x/y', 'bin', 'n'), ('f4', \(b), 'u1', \(sha1), 100, 'x/y', 'bin', 'n')
                """)
            try directory.write(
                quotas, try String(contentsOfFile: Self.repositoryMigrations + "/" + quotas, encoding: .utf8))
            #expect(try await migrator.migrate() == [quotas])
            let users = try await client.query(
                "SELECT app_id, user_id, bytes FROM file_user_usage ORDER BY app_id, user_id"
            ).map {
                "\(try $0.decode(0, as: Int64.self)):\(try $0.decode(1, as: String.self)):\(try $0.decode(2, as: Int64.self))"
            }
            #expect(users == ["\(a):u1:200", "\(a):u2:30", "\(b):u1:100"])
            let perApp = try await client.query("SELECT app_id, bytes FROM file_app_usage ORDER BY app_id").map {
                "\(try $0.decode(0, as: Int64.self)):\(try $0.decode(1, as: Int64.self))"
            }
            #expect(perApp == ["\(a):130", "\(b):100"])
            // From then on the triggers keep them: one statement deleting several users' files.
            _ = try await client.query("DELETE FROM files WHERE object_key IN ('f2', 'f3', 'f4')")
            _ = try await client.query("DELETE FROM file_blobs WHERE storage_key IN ('k2', 'k3')")
            let after = try await client.query(
                """
                SELECT (SELECT string_agg(user_id || ':' || bytes, ',' ORDER BY app_id, user_id) FROM file_user_usage),
                       (SELECT string_agg(bytes::text, ',' ORDER BY app_id) FROM file_app_usage)
                """)[0]
            #expect(try after.decode(0, as: String.self) == "u1:100,u2:0,u1:0")
            #expect(try after.decode(1, as: String.self) == "100,0")
        }
    }
}

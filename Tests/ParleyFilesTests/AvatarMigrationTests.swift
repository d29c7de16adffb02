import Foundation
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

/// migrations/0017: avatars set before the check became avatar records when their holder could read the file, and
/// were cleared otherwise.
@Suite struct AvatarMigrationTests {
    @Test func legacyAvatarsBecomeRecordsOrAreCleared() async throws {
        let directory = NSTemporaryDirectory() + "parley-avatar-migration-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let all = try FileManager.default.contentsOfDirectory(atPath: LiveApp.migrationsDirectory).sorted()
        let source = { (name: String) in LiveApp.migrationsDirectory + "/" + name }
        for name in all where name.hasSuffix(".sql") && name < "0017" {
            try FileManager.default.copyItem(atPath: source(name), toPath: directory + "/" + name)
        }
        let database = try await TestDatabase.create()
        let client = PostgresClient(
            configuration: PostgresConfiguration(conninfo: database.url, poolSize: 1),
            group: TestEnvironment.eventLoopGroup, logger: TestEnvironment.capturingLogger().logger)
        let migrator = Migrator(client: client, directory: directory, logger: TestEnvironment.capturingLogger().logger)
        do {
            _ = try await migrator.migrate()
            let png = "2026/01/aaaaaaaaaaaaaaaaaaaaaa"
            try await client.withConnection { connection in
                try await connection.execute(
                    unsafeSQL: """
                        INSERT INTO apps (app_key, name, secret_ciphertext) VALUES ('ak_legacy', 'legacy', '\\x00');
                        INSERT INTO users (app_id, id, avatar) SELECT id, 'u_owner', id || '/\(png)' FROM apps;
                        INSERT INTO users (app_id, id, avatar) SELECT id, 'u_thief', id || '/\(png)' FROM apps;
                        INSERT INTO users (app_id, id, avatar) SELECT id, 'u_dangling', 'avatars/x.png' FROM apps;
                        INSERT INTO file_blobs (app_id, sha256, size, storage_key)
                            SELECT id, repeat('a', 64), 67, 'blobs/a' FROM apps;
                        INSERT INTO files (object_key, app_id, owner_id, sha256, size, mime_type, ext, name)
                            SELECT id || '/\(png)', id, 'u_owner', repeat('a', 64), 67, 'image/png', 'png', 'me.png'
                            FROM apps;
                        INSERT INTO groups (app_id, id, name, avatar_key, owner_id)
                            SELECT id, 'g_team', 'Team', id || '/\(png)', 'u_thief' FROM apps;
                        """)
            }
            try FileManager.default.copyItem(
                atPath: source("0017_avatar_records.sql"), toPath: directory + "/0017_avatar_records.sql")
            #expect(try await migrator.migrate().count == 1)

            let users = try await client.query("SELECT id, avatar FROM users ORDER BY id")
            let avatars = try Dictionary(
                uniqueKeysWithValues: users.map {
                    (try $0.decode("id", as: String.self), try $0.decode("avatar", as: String?.self))
                })
            // The owner keeps a record of the photo; the thief (no message carried it to them), the dangling key
            // and the group (none of its members uploaded it) lose theirs.
            let record = try #require(avatars["u_owner"] ?? nil)
            #expect(!record.hasSuffix(png))
            #expect(avatars["u_thief"] == .some(nil))
            #expect(avatars["u_dangling"] == .some(nil))
            let group = try await client.query("SELECT avatar_key FROM groups")
            #expect(try group[0].decode("avatar_key", as: String?.self) == nil)
            let rows = try await client.query(
                "SELECT avatar_kind, avatar_holder, owner_id, mime_type FROM files WHERE object_key = \(record)")
            #expect(try rows[0].decode("avatar_kind", as: String?.self) == "user")
            #expect(try rows[0].decode("avatar_holder", as: String?.self) == "u_owner")
            #expect(try rows[0].decode("mime_type", as: String.self) == "image/png")
            #expect(
                record.range(of: #"^[0-9]+/[0-9]{4}/[0-9]{2}/[A-Za-z0-9_-]{22}$"#, options: .regularExpression) != nil)
        } catch {
            await client.shutdown()
            await database.drop()
            throw error
        }
        await client.shutdown()
        await database.drop()
    }
}

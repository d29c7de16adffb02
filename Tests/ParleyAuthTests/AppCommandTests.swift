import Foundation
import ParleyApp
import ParleyLiveSupport
import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyAuth

/// `parley app create|list|rotate-secret|update` through `AppCommand`, against a migrated database.
@Suite("parley app commands")
struct AppCommandTests {
    static func run(_ arguments: [String], _ configuration: Configuration) async throws -> [String] {
        try await CommandOutput.lines { try await AppCommand.run(arguments, configuration: configuration, output: $0) }
    }

    @Test func createListRotate() async throws {
        try await withDatabase { url in
            // The live server applies the migrations (and is used below to check the printed secret works).
            let live = try await LiveApp(databaseURL: url)
            let configuration = try LiveApp.configuration(databaseURL: url, masterKeyHex: live.masterKeyHex)
            do {
                let created = try await Self.run(
                    ["create", "--name", "Chat Demo", "--privacy-version", "3"], configuration)
                let key = try #require(CommandOutput.field("appKey", in: created))
                let secret = try #require(CommandOutput.field("appSecret", in: created))
                #expect(key.hasPrefix("ak_"))
                #expect(secret.hasPrefix("as_") && secret.count == 46)
                #expect(created.filter { $0.contains(secret) }.count == 1) // printed once
                #expect(CommandOutput.field("privacyVersion", in: created) == "3")

                let stored = try await live.app.database.query(
                    "SELECT secret_ciphertext FROM apps WHERE app_key = \(key)")[0].decode(0, as: [UInt8].self)
                #expect(!String(decoding: stored, as: UTF8.self).contains(secret)) // encrypted at rest
                #expect(stored.count == 12 + secret.utf8.count + 16)

                let listed = try await Self.run(["list"], configuration)
                #expect(listed.contains { $0.contains(key) && $0.contains("Chat Demo") })
                #expect(!listed.joined().contains("as_"))

                // The printed secret signs requests the server accepts.
                _ = try await eventually { live.auth.directory.app(key: key) != nil }
                let ok = try await SignedRequestTests.signedLogin(
                    live.client(), appKey: key, secret: secret, userId: "x")
                #expect(ok.status == 200)

                let rotated = try await Self.run(["rotate-secret", key, "--grace-seconds", "0"], configuration)
                let newSecret = try #require(CommandOutput.field("appSecret", in: rotated))
                #expect(newSecret != secret)
                #expect(
                    try await eventually {
                        try await SignedRequestTests.signedLogin(
                            live.client(), appKey: key, secret: secret, userId: "x"
                        ).code == 1038
                    } != nil)
                #expect(
                    try await SignedRequestTests.signedLogin(
                        live.client(), appKey: key, secret: newSecret,
                        userId: "x"
                    ).status == 200)

                let updated = try await Self.run(
                    ["update", key, "--session-policy", "single", "--privacy-version", "4"],
                    configuration)
                #expect(CommandOutput.field("sessionPolicy", in: updated) == "single")
                #expect(CommandOutput.field("privacyVersion", in: updated) == "4")

                await #expect(throws: AppCommand.UsageError.self) { try await Self.run(["create"], configuration) }
                await #expect(throws: AppCommand.UsageError.self) {
                    try await Self.run(["rotate-secret", "ak_nope"], configuration)
                }
                await #expect(throws: AppCommand.UsageError.self) {
                    try await Self.run(["create", "--name", "x", "--session-policy", "many"], configuration)
                }
            } catch {
                await live.stop()
                throw error
            }
            await live.stop()
        }
    }

    /// `parley app files` sets the app's storage quotas over the server's (0: none) and hands them back.
    @Test func filesSetsAndClearsStorageQuotas() async throws {
        try await withDatabase { url in
            let live = try await LiveApp(databaseURL: url)
            let configuration = try LiveApp.configuration(databaseURL: url, masterKeyHex: live.masterKeyHex)
            do {
                let key = try #require(
                    CommandOutput.field("appKey", in: try await Self.run(["create", "--name", "Q"], configuration)))
                let shown = try await Self.run(["files", key], configuration)
                #expect(CommandOutput.field("userQuotaBytes", in: shown) == "1073741824 (server default)")
                #expect(CommandOutput.field("appQuotaBytes", in: shown) == "none (server default)")
                #expect(CommandOutput.field("storedBytes", in: shown) == "0")
                let set = try await Self.run(
                    ["files", key, "--user-quota-bytes", "5000", "--app-quota-bytes", "0", "--max-bytes", "100"],
                    configuration)
                #expect(CommandOutput.field("userQuotaBytes", in: set) == "5000")
                #expect(CommandOutput.field("appQuotaBytes", in: set) == "none")
                #expect(CommandOutput.field("maxFileBytes", in: set) == "100")
                // Other options keep the quotas; --server-quotas returns both to the server's settings.
                let types = try await Self.run(["files", key, "--types", "image/*"], configuration)
                #expect(CommandOutput.field("userQuotaBytes", in: types) == "5000")
                let cleared = try await Self.run(["files", key, "--server-quotas"], configuration)
                #expect(CommandOutput.field("userQuotaBytes", in: cleared) == "1073741824 (server default)")
                #expect(CommandOutput.field("maxFileBytes", in: cleared) == "100")
                await #expect(throws: AppCommand.UsageError.self) {
                    try await Self.run(["files", key, "--server-quotas", "--user-quota-bytes", "1"], configuration)
                }
            } catch {
                await live.stop()
                throw error
            }
            await live.stop()
        }
    }

    @Test func serveAndAppCommandsRefuseWithoutMasterKey() async throws {
        var environment = ["DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"]
        let configuration = try Configuration(environment: environment)
        #expect(configuration.masterKey == nil)
        await #expect(throws: (any Error).self) { try await Self.run(["list"], configuration) }
        // `serve` refuses before it builds anything.
        #expect {
            _ = try Application(configuration: configuration)
        } throws: { error in
            String(describing: error).contains("PARLEY_MASTER_KEY is not set")
        }
        environment["PARLEY_MASTER_KEY"] = "too short"
        #expect(throws: Configuration.Invalid.self) { try Configuration(environment: environment) }
    }
}

import Foundation
import ParleyApp
import ParleyAuth
import ParleyCrypto
import ParleyLiveSupport
import ParleyPush
import Synchronization
import Testing

/// `parley app push` through `AppCommand`, against a migrated database.
@Suite("parley app push")
struct PushCommandTests {
    static func run(_ arguments: [String], _ configuration: Configuration) async throws -> [String] {
        try await CommandOutput.lines { try await AppCommand.run(arguments, configuration: configuration, output: $0) }
    }

    @Test func configuresAPNsAndRefusesBadValues() async throws {
        try await withDatabase { url in
            let live = try await LiveApp(databaseURL: url)
            let configuration = try LiveApp.configuration(databaseURL: url, masterKeyHex: live.masterKeyHex)
            do {
                let (app, _) = try await live.createApp(name: "Push CLI")
                let key = try P256.SigningKey.generate()
                let keyFile = NSTemporaryDirectory() + "AuthKey_\(UUID().uuidString).p8"
                try key.pem.write(toFile: keyFile, atomically: true, encoding: .utf8)
                defer { try? FileManager.default.removeItem(atPath: keyFile) }

                let empty = try await Self.run(["push", app.appKey], configuration)
                #expect(CommandOutput.field("enabled", in: empty) == "false")
                #expect(CommandOutput.field("apnsKey", in: empty) == "(none)")

                // Enabling needs complete credentials.
                await #expect(throws: AppCommand.UsageError.self) {
                    try await Self.run(["push", app.appKey, "--enable", "--team-id", "TEAM000001"], configuration)
                }
                for bad in [
                    ["--key-id", "short"], ["--team-id", "lowercase1"], ["--bundle-id", "not a bundle"],
                    ["--preview", "everything"], ["--endpoint", "ftp://x"], ["--apns-key-file", "/nonexistent.p8"],
                    ["--enable", "--disable"],
                ] {
                    await #expect(throws: AppCommand.UsageError.self, "\(bad)") {
                        try await Self.run(["push", app.appKey] + bad, configuration)
                    }
                }
                let notAKey = NSTemporaryDirectory() + "not-a-key-\(UUID().uuidString).p8"
                try "hello".write(toFile: notAKey, atomically: true, encoding: .utf8)
                defer { try? FileManager.default.removeItem(atPath: notAKey) }
                await #expect(throws: AppCommand.UsageError.self) {
                    try await Self.run(["push", app.appKey, "--apns-key-file", notAKey], configuration)
                }

                let set = try await Self.run(
                    [
                        "push", app.appKey, "--apns-key-file", keyFile, "--key-id", "KEY0000001",
                        "--team-id", "TEAM000001", "--bundle-id", "com.example.chat",
                        "--preview", "sender", "--endpoint", "http://127.0.0.1:9/", "--enable",
                    ],
                    configuration)
                #expect(CommandOutput.field("enabled", in: set) == "true")
                #expect(CommandOutput.field("apnsKey", in: set) == "(stored, encrypted)")
                #expect(CommandOutput.field("preview", in: set) == "sender")
                #expect(CommandOutput.field("endpoint", in: set) == "http://127.0.0.1:9")
                #expect(!set.joined().contains("PRIVATE KEY"))

                let stored = try #require(
                    try await PushSettingsRepository(database: live.app.database).settings(appId: app.id))
                let sealed = try #require(stored.sealedKey)
                #expect(!String(decoding: sealed, as: UTF8.self).contains("PRIVATE KEY"), "encrypted at rest")
                let opened = PushKeyBox(masterKey: live.auth.configuration.masterKey).open(sealed, appId: app.id)
                #expect(opened == key.pem)

                let changed = try await Self.run(
                    ["push", app.appKey, "--endpoint", "default", "--disable"], configuration)
                #expect(CommandOutput.field("enabled", in: changed) == "false")
                #expect(CommandOutput.field("endpoint", in: changed)?.hasPrefix("(Apple's") == true)
                #expect(CommandOutput.field("teamId", in: changed) == "TEAM000001", "other settings are kept")

                await #expect(throws: AppCommand.UsageError.self) {
                    try await Self.run(["push", "ak_nosuchapp"], configuration)
                }
            } catch {
                await live.stop()
                throw error
            }
            await live.stop()
        }
    }
}

import Foundation
import ParleyApp
import ParleyLiveSupport
import ParleyTestSupport
import Synchronization
import Testing

/// `parley release publish|list|update|withdraw` through `ReleaseCommand`, against the database of a running
/// server: the server's cached answers follow through NOTIFY, as they would on any other instance.
@Suite("parley release commands")
struct ReleaseCommandTests {
    static func run(_ arguments: [String], _ configuration: Configuration) async throws -> [String] {
        try await CommandOutput.lines {
            try await ReleaseCommand.run(arguments, configuration: configuration, output: $0)
        }
    }

    @Test func publishListUpdateWithdraw() async throws {
        try await withDatabase { url in
            let live = try await LiveApp(databaseURL: url)
            let configuration = try LiveApp.configuration(databaseURL: url, masterKeyHex: live.masterKeyHex)
            do {
                let (app, secret) = try await live.createApp(name: "CLI")
                let fx = UpdatesFixture(live: live, app: app, secret: secret, client: live.client())
                #expect(try await fx.check(1).needsUpdate == false) // the server caches "no releases"

                let published = try await Self.run(
                    [
                        "publish", "--app", app.appKey, "--platform", "ios", "--version-code", "42", "--version-name",
                        "2.0",
                        "--notes", "New look", "--app-store-url", "https://apps.apple.com/app/id1", "--min-supported",
                        "40",
                        "--rollout", "100",
                    ], configuration)
                let id = try #require(CommandOutput.field("releaseId", in: published))
                #expect(CommandOutput.field("versionCode", in: published) == "42")
                #expect(CommandOutput.field("minSupported", in: published) == "40")
                // The server's cache learns of it through NOTIFY.
                #expect(
                    try await eventually(timeout: .seconds(10)) { try await fx.check(1).offeredVersion == 42 } != nil)
                #expect(try await fx.check(39).forceUpdate == true)

                let refused = await #expect(throws: ReleaseCommand.Refused.self) {
                    try await Self.run(
                        [
                            "publish", "--app", app.appKey, "--platform", "ios", "--version-code", "42",
                            "--version-name", "again", "--app-store-url", "https://x/y",
                        ], configuration)
                }
                #expect(refused?.code == 1401)
                await #expect(throws: AppCommand.UsageError.self) {
                    try await Self.run(
                        [
                            "publish", "--app", app.appKey, "--platform", "ios", "--version-code", "43",
                            "--version-name", "no url",
                        ], configuration)
                }
                let noStoreURL = await #expect(throws: AppCommand.UsageError.self) {
                    try await Self.run(
                        [
                            "publish", "--app", app.appKey, "--platform", "ios", "--version-code", "43",
                            "--version-name", "ipa only", "--download-url", "https://example.com/a.ipa",
                        ], configuration)
                }
                #expect(noStoreURL?.description.contains("appStoreUrl") == true)
                await #expect(throws: AppCommand.UsageError.self) {
                    try await Self.run(["publish", "--app", "ak_nope", "--platform", "ios"], configuration)
                }
                await #expect(throws: AppCommand.UsageError.self) { try await Self.run(["list"], configuration) }

                let updated = try await Self.run(["update", "--app", app.appKey, id, "--rollout", "0"], configuration)
                #expect(CommandOutput.field("rollout", in: updated) == "0%")
                #expect(
                    try await eventually(timeout: .seconds(10)) {
                        try await fx.check(40, deviceId: "d").needsUpdate == false
                    } != nil)

                let listed = try await Self.run(["list", "--app", app.appKey, "--platform", "ios"], configuration)
                #expect(listed.count == 2 && listed[1].hasPrefix("\(id)\tios\t\t42\t2.0\t40\t0%"))

                let withdrawn = try await Self.run(["withdraw", "--app", app.appKey, id], configuration)
                #expect(CommandOutput.field("withdrawnAt", in: withdrawn) != nil)
                #expect(
                    try await eventually(timeout: .seconds(10)) { try await fx.check(39).forceUpdate == false } != nil)
                #expect(try await Self.run(["list", "--app", app.appKey], configuration).count == 1)
                #expect(
                    try await Self.run(["list", "--app", app.appKey, "--include-withdrawn"], configuration).count == 2)
            } catch {
                await live.stop()
                throw error
            }
            await live.stop()
        }
    }
}

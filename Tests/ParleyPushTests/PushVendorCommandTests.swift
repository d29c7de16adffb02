import Foundation
import ParleyApp
import ParleyAuth
import ParleyCrypto
import ParleyLiveSupport
import ParleyPush
import Testing

/// `parley app push`'s FCM and HMS options through `AppCommand`, against a migrated database.
@Suite("parley app push: FCM and HMS")
struct PushVendorCommandTests {
    static func run(_ arguments: [String], _ configuration: Configuration) async throws -> [String] {
        try await PushCommandTests.run(arguments, configuration)
    }

    static func write(_ bytes: [UInt8], name: String) throws -> String {
        let path = NSTemporaryDirectory() + "\(UUID().uuidString)-\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func storesVendorsSealedAndNeverPrintsTheirSecrets() async throws {
        try await withDatabase { url in
            let live = try await LiveApp(databaseURL: url)
            let configuration = try LiveApp.configuration(databaseURL: url, masterKeyHex: live.masterKeyHex)
            do {
                let (app, _) = try await live.createApp(name: "Android push CLI")
                let project = try MockFCMProject()
                let accountFile = try Self.write(project.serviceAccountJSON, name: "service-account.json")
                defer { try? FileManager.default.removeItem(atPath: accountFile) }

                let empty = try await Self.run(["push", app.appKey], configuration)
                #expect(CommandOutput.field("fcmAccount", in: empty) == "(none)")
                #expect(CommandOutput.field("hmsSecret", in: empty) == "(none)")

                // FCM alone is enough to turn push on (an Android-only app).
                let set = try await Self.run(
                    [
                        "push", app.appKey, "--fcm-service-account", accountFile, "--fcm-endpoint",
                        "http://127.0.0.1:9/", "--fcm-token-uri-override", "http://127.0.0.1:9/token", "--enable",
                    ],
                    configuration)
                #expect(CommandOutput.field("enabled", in: set) == "true")
                #expect(CommandOutput.field("fcmProjectId", in: set) == MockFCMProject.projectId)
                #expect(CommandOutput.field("fcmAccount", in: set) == "(stored, encrypted)")
                #expect(CommandOutput.field("fcmEndpoint", in: set) == "http://127.0.0.1:9")
                #expect(CommandOutput.field("fcmTokenURI", in: set) == "http://127.0.0.1:9/token")
                #expect(CommandOutput.field("apnsKey", in: set) == "(none)")

                let hms = try await Self.run(
                    [
                        "push", app.appKey, "--hms-app-id", MockHMSApp.appId, "--hms-client-secret",
                        MockHMSApp.clientSecret, "--hms-oauth-endpoint", "http://127.0.0.1:9",
                    ],
                    configuration)
                #expect(CommandOutput.field("hmsAppId", in: hms) == MockHMSApp.appId)
                #expect(CommandOutput.field("hmsSecret", in: hms) == "(stored, encrypted)")
                #expect(CommandOutput.field("hmsOAuthEndpoint", in: hms) == "http://127.0.0.1:9")
                #expect(CommandOutput.field("fcmAccount", in: hms) == "(stored, encrypted)", "FCM is kept")
                let printed = (set + hms).joined(separator: "\n")
                #expect(!printed.contains("PRIVATE KEY") && !printed.contains(MockHMSApp.clientSecret))
                #expect(!printed.contains(MockFCMProject.clientEmail))

                // At rest: sealed, and opening only under the master key for this app.
                let row = try #require(
                    try await live.app.database.query(
                        """
                        SELECT fcm_service_account_ciphertext, hms_client_secret_ciphertext
                        FROM app_push_vendor_settings WHERE app_id = \(app.id)
                        """
                    ).first)
                let sealedAccount: [UInt8] = try row.decode("fcm_service_account_ciphertext")
                let sealedSecret: [UInt8] = try row.decode("hms_client_secret_ciphertext")
                let stored = String(decoding: sealedAccount + sealedSecret, as: UTF8.self)
                #expect(!stored.contains("PRIVATE KEY") && !stored.contains(MockFCMProject.clientEmail))
                #expect(!stored.contains(MockHMSApp.clientSecret))
                let box = PushKeyBox(masterKey: live.auth.configuration.masterKey)
                #expect(box.openFCMServiceAccount(sealedAccount, appId: app.id) == project.serviceAccountJSON)
                #expect(box.openHMSClientSecret(sealedSecret, appId: app.id) == MockHMSApp.clientSecret)
                #expect(box.openFCMServiceAccount(sealedAccount, appId: app.id + 1) == nil, "bound to its app")
                #expect(box.openHMSClientSecret(sealedAccount, appId: app.id) == nil, "bound to its kind")

                let cleared = try await Self.run(
                    ["push", app.appKey, "--remove-fcm", "--hms-oauth-endpoint", "default"], configuration)
                #expect(CommandOutput.field("fcmProjectId", in: cleared) == "(none)")
                #expect(CommandOutput.field("fcmAccount", in: cleared) == "(none)")
                #expect(CommandOutput.field("fcmEndpoint", in: cleared) == "(Google's)")
                #expect(CommandOutput.field("hmsOAuthEndpoint", in: cleared) == "(Huawei's)")
                #expect(CommandOutput.field("hmsSecret", in: cleared) == "(stored, encrypted)")
                let gone = try await Self.run(["push", app.appKey, "--remove-hms", "--disable"], configuration)
                #expect(CommandOutput.field("hmsAppId", in: gone) == "(none)")
                #expect(CommandOutput.field("enabled", in: gone) == "false")
                // With no vendor left, push cannot be turned on.
                await #expect(throws: AppCommand.UsageError.self) {
                    try await Self.run(["push", app.appKey, "--enable"], configuration)
                }
            } catch {
                await live.stop()
                throw error
            }
            await live.stop()
        }
    }

    @Test func refusesBadFilesAndValuesStoringNothing() async throws {
        try await withDatabase { url in
            let live = try await LiveApp(databaseURL: url)
            let configuration = try LiveApp.configuration(databaseURL: url, masterKeyHex: live.masterKeyHex)
            do {
                let (app, _) = try await live.createApp(name: "Android push refusals")
                let project = try MockFCMProject()
                func account(_ change: (inout [String: Any]) -> Void) throws -> String {
                    var object = try #require(
                        try JSONSerialization.jsonObject(with: Data(project.serviceAccountJSON)) as? [String: Any])
                    change(&object)
                    return try Self.write(Array(try JSONSerialization.data(withJSONObject: object)), name: "sa.json")
                }
                let files = [
                    try Self.write(Array("{not json".utf8), name: "broken.json"),
                    try account { $0["private_key"] = nil },
                    try account { $0["client_email"] = nil },
                    try account { $0["project_id"] = nil },
                    try account { $0["private_key"] = try! P256.SigningKey.generate().pem },
                    try account { $0["type"] = "authorized_user" },
                    NSTemporaryDirectory() + "no-such-file.json",
                ]
                defer { for file in files { try? FileManager.default.removeItem(atPath: file) } }
                var refused: [[String]] = files.map { ["--fcm-service-account", $0, "--enable"] }
                refused += [
                    ["--hms-app-id", MockHMSApp.appId], ["--hms-client-secret", "secret"],
                    ["--hms-app-id", "com.example", "--hms-client-secret", "secret"],
                    ["--hms-app-id", MockHMSApp.appId, "--hms-client-secret", "has space"],
                    ["--fcm-endpoint", "ftp://x"], ["--hms-endpoint", "not a url"],
                    ["--fcm-token-uri-override", "mailto:x"], ["--hms-oauth-endpoint", ""],
                    ["--remove-fcm", "--fcm-endpoint", "http://127.0.0.1:9"],
                    ["--remove-hms", "--hms-app-id", MockHMSApp.appId, "--hms-client-secret", "s"],
                ]
                for arguments in refused {
                    await #expect(throws: AppCommand.UsageError.self, "\(arguments)") {
                        try await Self.run(["push", app.appKey] + arguments, configuration)
                    }
                }
                let stored = try await live.app.database.query(
                    "SELECT count(*) AS n FROM app_push_vendor_settings")[0].decode("n", as: Int.self)
                #expect(stored == 0, "nothing half-stored")
                let settings = try await Self.run(["push", app.appKey], configuration)
                #expect(CommandOutput.field("enabled", in: settings) == "false")
            } catch {
                await live.stop()
                throw error
            }
            await live.stop()
        }
    }
}

import Foundation
import ParleyApp
import ParleyAuth
import ParleyCrypto
import ParleyLiveSupport
import ParleyPush
import ParleyTestSupport
import Testing

/// `parley rotate-master-key` (issue 18, item 10): with the old key as PARLEY_PREVIOUS_MASTER_KEY, servers keep
/// opening what it sealed and verifying the tokens it signed; the command reseals app secrets, APNs keys and FCM and
/// HMS secrets under the new key, so the old one can be dropped.
@Suite("Master key rotation")
struct MasterKeyRotationTests {
    static func rotate(_ configuration: Configuration) async throws -> [String] {
        try await CommandOutput.lines { try await MasterKeyCommand.run([], configuration: configuration, output: $0) }
    }

    static let certificatePEM = "-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n"

    @Test func resealsEverySecretAndKeepsServingThroughout() async throws {
        try await withDatabase { url in
            let oldKey = MasterKey.generateHex()
            let newKey = MasterKey.generateHex()
            let before = try await LiveApp(databaseURL: url, masterKeyHex: oldKey)
            let (app, secret): (AppSettings, String)
            let accessToken: String
            do {
                (app, secret) = try await before.createApp()
                var update = PushSettingsRepository.Update()
                update.sealedKey = try PushKeyBox(masterKey: try MasterKey(parsing: oldKey))
                    .seal(pem: try P256.SigningKey.generate().pem, appId: app.id)
                // An APNs certificate (migrations/0028) is resealed with the keys.
                update.sealedCertificates[.production] = try PushKeyBox(masterKey: try MasterKey(parsing: oldKey))
                    .seal(certificatePEM: Self.certificatePEM, appId: app.id, environment: .production)
                try await PushSettingsRepository(database: before.app.database).update(appId: app.id, update)
                let oldBox = PushKeyBox(masterKey: try MasterKey(parsing: oldKey))
                var vendors = PushVendorSettingsRepository.Update()
                vendors.fcmProjectId = MockFCMProject.projectId
                vendors.sealedFCMServiceAccount = try oldBox.sealFCMServiceAccount(
                    try MockFCMProject().serviceAccountJSON, appId: app.id)
                vendors.hmsAppId = MockHMSApp.appId
                vendors.sealedHMSClientSecret = try oldBox.sealHMSClientSecret(MockHMSApp.clientSecret, appId: app.id)
                try await PushVendorSettingsRepository(database: before.app.database).update(appId: app.id, vendors)
                accessToken = try Session(try await before.client().register(appKey: app.appKey, username: "ann"))
                    .accessToken
            } catch {
                await before.stop()
                throw error
            }
            await before.stop()

            // Both keys: what the old one sealed opens, the tokens it signed verify, before any reseal.
            let rotating = ["PARLEY_PREVIOUS_MASTER_KEY": oldKey]
            let during = try await LiveApp(databaseURL: url, masterKeyHex: newKey, environment: rotating)
            do {
                let client = during.client()
                #expect(try await client.get("/api/users/me", token: accessToken).status == 200)
                let signed = try await during.signedLogin(
                    appKey: app.appKey, secret: secret, ["appKey": app.appKey, "userId": "tb_1", "platform": "ios"])
                #expect(signed.status == 200, "\(signed.text)")

                let configuration = try LiveApp.configuration(
                    databaseURL: url, masterKeyHex: newKey, environment: rotating)
                #expect(
                    try await Self.rotate(configuration) == [
                        "app secrets: 1 resealed, 0 already under the new key",
                        "APNs keys: 2 resealed, 0 already under the new key",
                        "FCM and HMS secrets: 2 resealed, 0 already under the new key",
                    ])
                // Again: nothing left to do.
                #expect(
                    try await Self.rotate(configuration) == [
                        "app secrets: 0 resealed, 1 already under the new key",
                        "APNs keys: 0 resealed, 2 already under the new key",
                        "FCM and HMS secrets: 0 resealed, 2 already under the new key",
                    ])
                // Keys that open nothing stored refuse and change nothing; a missing previous key is a usage error.
                let strangers = try LiveApp.configuration(
                    databaseURL: url, masterKeyHex: MasterKey.generateHex(),
                    environment: ["PARLEY_PREVIOUS_MASTER_KEY": MasterKey.generateHex()])
                await #expect(throws: MasterKeyCommand.Refused.self) { try await Self.rotate(strangers) }
                let alone = try LiveApp.configuration(databaseURL: url, masterKeyHex: newKey)
                await #expect(throws: AppCommand.UsageError.self) { try await Self.rotate(alone) }
            } catch {
                await during.stop()
                throw error
            }
            await during.stop()

            // The old key dropped: everything stored opens under the new key alone; its tokens are gone.
            let after = try await LiveApp(databaseURL: url, masterKeyHex: newKey)
            do {
                let signed = try await after.signedLogin(
                    appKey: app.appKey, secret: secret, ["appKey": app.appKey, "userId": "tb_1", "platform": "ios"])
                #expect(signed.status == 200, "\(signed.text)")
                let settings = try #require(
                    try await PushSettingsRepository(database: after.app.database).settings(appId: app.id))
                let sealed = try #require(settings.sealedKey)
                let newBox = PushKeyBox(masterKey: try MasterKey(parsing: newKey))
                #expect(newBox.open(sealed, appId: app.id) != nil)
                let vendors = try #require(
                    try await PushVendorSettingsRepository(database: after.app.database).settings(appId: app.id))
                #expect(
                    newBox.openFCMServiceAccount(try #require(vendors.sealedFCMServiceAccount), appId: app.id) != nil)
                #expect(
                    newBox.openHMSClientSecret(try #require(vendors.sealedHMSClientSecret), appId: app.id)
                        == MockHMSApp.clientSecret)
                let certificate = try #require(settings.sealedCertificates[.production])
                #expect(
                    newBox.openCertificate(certificate, appId: app.id, environment: .production) == Self.certificatePEM)
                #expect(
                    newBox.openCertificate(certificate, appId: app.id, environment: .sandbox) == nil,
                    "sealed for its environment only")
                #expect(try await after.client().get("/api/users/me", token: accessToken).code == 1030)
            } catch {
                await after.stop()
                throw error
            }
            await after.stop()
        }
    }
}

import Foundation
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

/// iOS update answers always carry `appStoreUrl`: the 001 SDK decodes `info.appStoreUrl` as a non-optional string.
@Suite("App Store URLs of iOS releases")
struct AppStoreURLTests {
    @Test func anIOSReleaseWithoutAnAppStoreURLIsRefusedAndNothingIsStored() async throws {
        try await UpdatesFixture.run { fx in
            let ipaOnly = try await fx.publish(
                1, extra: ["appStoreUrl": NSNull(), "downloadUrl": "https://example.com/a.ipa"])
            #expect(ipaOnly.status == 400 && ipaOnly.code == 1002)
            #expect(ipaOnly.message?.contains("appStoreUrl") == true)
            // Upper case is the same platform.
            let shouted = try await fx.publish(
                1, platform: "IOS", extra: ["appStoreUrl": NSNull(), "downloadUrl": "https://example.com/a.ipa"])
            #expect(shouted.code == 1002)
            let listed = try await fx.signed("GET", "/api/admin/releases?includeWithdrawn=true")
            #expect((listed.data["releases"] as? [Any])?.count == 0)
            // Other platforms need only one of the two URLs.
            let android = try await fx.publish(
                1, platform: "android", extra: ["appStoreUrl": NSNull(), "downloadUrl": "https://example.com/a.apk"])
            #expect(android.status == 201)
            let check = try await fx.check(0, platform: "android")
            #expect(check.info?["appStoreUrl"] is NSNull)
            #expect(check.info?["downloadUrl"] as? String == "https://example.com/a.apk")
        }
    }

    /// A release stored before the rule (only a download URL) is still offered, with that URL as its
    /// `appStoreUrl`; its next change must give it an App Store URL.
    @Test func anEarlierIOSReleaseWithoutOneAnswersItsDownloadURL() async throws {
        try await UpdatesFixture.run { fx in
            let rows = try await fx.live.app.database.query(
                """
                INSERT INTO releases (app_id, platform, version_code, version_name, download_url)
                VALUES (\(fx.app.id), 'ios', 5, '0.5', 'itms-services://?action=download-manifest&url=https://x/m.plist')
                RETURNING id
                """)
            let id = try rows[0].decode("id", as: Int64.self)
            _ = try await fx.live.app.database.query(
                "SELECT pg_notify('parley_release_changed', \(String(fx.app.id)))")
            var info: [String: Any]?
            #expect(
                try await eventually {
                    info = try await fx.check(1).info
                    return info != nil
                } != nil)
            let offered = try #require(info)
            #expect(
                offered["appStoreUrl"] as? String == "itms-services://?action=download-manifest&url=https://x/m.plist")
            #expect(offered["downloadUrl"] as? String == offered["appStoreUrl"] as? String)

            let rollout = try await fx.signed("PATCH", "/api/admin/releases/\(id)", json: ["rolloutPercent": 50])
            #expect(rollout.status == 400 && rollout.code == 1002)
            #expect(rollout.message?.contains("appStoreUrl") == true)
            let fixed = try await fx.signed(
                "PATCH", "/api/admin/releases/\(id)",
                json: ["rolloutPercent": 50, "appStoreUrl": "https://apps.apple.com/app/id9"])
            #expect(fixed.status == 200 && fixed.data["appStoreUrl"] as? String == "https://apps.apple.com/app/id9")
            // Withdrawing needs no URL.
            #expect(try await fx.signed("DELETE", "/api/admin/releases/\(id)").status == 200)
        }
    }
}

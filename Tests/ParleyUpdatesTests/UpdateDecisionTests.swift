import Foundation
import ParleyCrypto
import ParleyHTTP
import Testing

@testable import ParleyUpdates

/// The choice an update check makes, without a server: `UpdateTrack` and `RolloutBucket` are pure.
@Suite("Update decisions")
struct UpdateDecisionTests {
    static func release(
        _ id: Int64, _ versionCode: Int64, minSupported: Int64? = nil, rollout: Int = 100,
        withdrawn: Bool = false, platform: String = "ios", channel: String = ""
    ) -> Release {
        Release(
            id: id, appId: 7, platform: platform, channel: channel, versionCode: versionCode,
            versionName: "v\(versionCode)", releaseNotes: "", appStoreUrl: "https://example.com/app",
            downloadUrl: nil, minSupportedVersionCode: minSupported, rolloutPercent: rollout,
            publishedAt: Date(timeIntervalSince1970: 1_767_225_600), withdrawnAt: withdrawn ? Date() : nil,
            updatedAt: Date())
    }

    /// (offered versionCode or nil, forced)
    static func decide(_ releases: [Release], caller: Int64, subject: String? = nil) -> (Int64?, Bool) {
        let track = UpdateTrack(appId: 7, releases: releases)
        let (index, forced) = track.decide(versionCode: caller, subject: subject)
        return (index.map { track.candidates[$0].versionCode }, forced)
    }

    @Test func atBelowAndAboveTheNewestRelease() {
        let releases = [Self.release(1, 100), Self.release(2, 110)]
        #expect(Self.decide(releases, caller: 90) == (110, false))
        #expect(Self.decide(releases, caller: 105) == (110, false))
        #expect(Self.decide(releases, caller: 110) == (nil, false))
        #expect(Self.decide(releases, caller: 500) == (nil, false))
        #expect(Self.decide([], caller: 1) == (nil, false))
    }

    @Test func belowTheHighestMinimumIsForced() {
        // The minimum of an older release still counts when the newest sets none.
        let releases = [
            Self.release(1, 100, minSupported: 95), Self.release(2, 110), Self.release(3, 120, minSupported: 80),
        ]
        #expect(Self.decide(releases, caller: 94) == (120, true))
        #expect(Self.decide(releases, caller: 95) == (120, false))
        #expect(Self.decide(releases, caller: 120) == (nil, false))
    }

    @Test func aForcedCallerOutsideTheRolloutGetsAReleaseThatSatisfiesTheMinimum() {
        // 120 is rolled out to nobody yet but demands 110: a caller at 105 must update, to the newest release.
        let unreleased = [Self.release(1, 100), Self.release(2, 120, minSupported: 110, rollout: 0)]
        #expect(Self.decide(unreleased, caller: 105, subject: "d:x") == (120, true))
        // Not forced (at the minimum) and not in the rollout: nothing newer than 100 is offered.
        #expect(Self.decide(unreleased, caller: 110, subject: "d:x") == (nil, false))
        // When an offered release satisfies the minimum, the rollout is respected: 115, not 120.
        let staged = [Self.release(1, 115), Self.release(2, 120, minSupported: 110, rollout: 0)]
        #expect(Self.decide(staged, caller: 105, subject: "d:x") == (115, true))
    }

    @Test func withdrawnReleasesAreNeitherOfferedNorForcing() {
        let releases = [Self.release(1, 100), Self.release(2, 110, minSupported: 105, withdrawn: true)]
        #expect(Self.decide(releases, caller: 100) == (nil, false))
        #expect(Self.decide(releases, caller: 90) == (100, false))
        let app = AppReleases(appId: 7, releases: releases)
        #expect(app.track(platform: "ios", channel: "")?.requiredVersionCode == nil)
    }

    @Test func thirtyPercentRolloutIsAStableThirdOfDevices() {
        let releases = [Self.release(1, 100), Self.release(2, 110, rollout: 30)]
        let devices = (0..<1000).map { "d:device-\($0)" }
        let offered = devices.filter { Self.decide(releases, caller: 100, subject: $0).0 == 110 }
        #expect((250...350).contains(offered.count), "\(offered.count) of 1000")
        // Never flickers: the same devices every time.
        for _ in 0..<3 {
            #expect(devices.filter { Self.decide(releases, caller: 100, subject: $0).0 == 110 } == offered)
        }
        // Widening keeps everyone who already had it.
        let widened = [Self.release(1, 100), Self.release(2, 110, rollout: 60)]
        let offeredWider = Set(devices.filter { Self.decide(widened, caller: 100, subject: $0).0 == 110 })
        #expect(offeredWider.isSuperset(of: offered))
        #expect((500...700).contains(offeredWider.count))
        // Outside the rollout the previous full release is still offered to older callers.
        let outside = try! #require(devices.first { !offered.contains($0) })
        #expect(Self.decide(releases, caller: 90, subject: outside) == (100, false))
        // Without a subject a partial rollout is offered to nobody.
        #expect(Self.decide(releases, caller: 100, subject: nil) == (nil, false))
    }

    @Test func bucketsFollowTheDocumentedHash() {
        // SHA-256("parley-rollout/7/2/d:abc"), first 8 bytes big-endian, mod 100.
        let digest = SHA256.hash(Array("parley-rollout/7/2/d:abc".utf8))
        let expected = Int(digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 100)
        let bucket = RolloutBucket.bucket(appId: 7, releaseId: 2, subject: "d:abc")
        #expect(bucket == expected)
        #expect(RolloutBucket.bucket(appId: 7, releaseId: 2, subject: "d:abc") == bucket)
        #expect(RolloutBucket.isOffered(appId: 7, releaseId: 2, rolloutPercent: bucket + 1, subject: "d:abc"))
        #expect(!RolloutBucket.isOffered(appId: 7, releaseId: 2, rolloutPercent: bucket, subject: "d:abc"))
        #expect(RolloutBucket.isOffered(appId: 7, releaseId: 2, rolloutPercent: 100, subject: nil))
        #expect(!RolloutBucket.isOffered(appId: 7, releaseId: 2, rolloutPercent: 0, subject: "d:abc"))
    }

    @Test func answersCarryATagOfTheirBody() throws {
        let track = UpdateTrack(appId: 7, releases: [Self.release(1, 100, minSupported: 50)])
        let update = track.answer(versionCode: 60, subject: nil)
        let forced = track.answer(versionCode: 40, subject: nil)
        let none = track.answer(versionCode: 100, subject: nil)
        #expect(Set([update.etag, forced.etag, none.etag]).count == 3)
        #expect(
            UpdateTrack(appId: 7, releases: [Self.release(1, 100, minSupported: 50)])
                .answer(versionCode: 60, subject: nil).etag == update.etag)
        let full = update.response(ifNoneMatch: nil)
        #expect(full.status == 200)
        #expect(full.headers["etag"] == update.etag)
        let json = try JSONSerialization.jsonObject(with: Data(full.body)) as! [String: Any]
        let data = json["data"] as! [String: Any]
        #expect(data["needsUpdate"] as? Bool == true && data["forceUpdate"] as? Bool == false)
        let info = data["info"] as! [String: Any]
        #expect(
            Set(info.keys) == [
                "versionCode", "versionName", "releaseNotes", "appStoreUrl", "downloadUrl", "publishedAt",
            ])
        #expect(info["downloadUrl"] is NSNull)
        #expect(info["publishedAt"] as? String == "2026-01-01T00:00:00.000Z")
        #expect(update.response(ifNoneMatch: update.etag).status == 304)
        #expect(update.response(ifNoneMatch: update.etag).body.isEmpty)
        #expect(update.response(ifNoneMatch: "\"other\", W/\(update.etag)").status == 304)
        #expect(update.response(ifNoneMatch: "*").status == 304)
        #expect(update.response(ifNoneMatch: none.etag).status == 200)
    }

    @Test func inputRules() throws {
        #expect(try ReleaseInput.platform("iOS") == "ios")
        #expect(throws: Never.self) { try ReleaseInput.channel(nil) }
        #expect(try ReleaseInput.channel("Beta.1") == "beta.1")
        for bad in ["", "i os", "ios/../x", String(repeating: "a", count: 33)] {
            #expect(throws: (any Error).self) { try ReleaseInput.platform(bad) }
        }
        #expect(try ReleaseInput.versionCode(query: "0") == 0)
        for bad in [nil, "", "-1", "1.5", "abc", "1234567890123456789", " 1"] {
            #expect(throws: (any Error).self) { try ReleaseInput.versionCode(query: bad) }
        }
        #expect(
            try ReleaseInput.url("itms-apps://itunes.apple.com/app/id1", field: "u")
                == "itms-apps://itunes.apple.com/app/id1")
        #expect(try ReleaseInput.url("HTTPS://example.com/a.apk", field: "u") == "HTTPS://example.com/a.apk")
        #expect(try ReleaseInput.url("market://details?id=x", field: "u") == "market://details?id=x")
        for bad in [
            "apps.apple.com/app", "https://a b", "1http://x", "https:", "", "http://example.com/a.apk",
            "javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "intent://x#Intent;end",
            "https://exampl\u{E9}.com",
        ] {
            #expect(throws: (any Error).self) { try ReleaseInput.url(bad, field: "u") }
        }
        #expect(throws: (any Error).self) {
            try ReleaseDraft(platform: "ios", versionCode: 10, versionName: "1.0")
        }
        #expect(throws: (any Error).self) {
            try ReleaseDraft(
                platform: "ios", versionCode: 10, versionName: "1.0", downloadUrl: "https://x/y",
                minSupportedVersionCode: 11)
        }
        let draft = try ReleaseDraft(
            platform: "Android", channel: "", versionCode: 10, versionName: "1.0",
            downloadUrl: "https://x/y.apk")
        #expect(draft.platform == "android" && draft.rolloutPercent == 100 && draft.releaseNotes == "")
    }

    @Test func checkQueryIsReadAndValidated() throws {
        let plain = try UpdateCheckQuery(HTTPQuery("platform=iOS&versionCode=123&channel=Beta&deviceId=abc-1&x=y"))
        #expect(
            plain.platform == "ios" && plain.versionCode == 123 && plain.channel == "beta" && plain.deviceId == "abc-1")
        // The first value of a repeated name wins; escapes and `+` are decoded; empty pairs are skipped.
        let escaped = try UpdateCheckQuery(HTTPQuery("&versionCode=7&platform=android&versionCode=9&&deviceId=a%2Fb+c"))
        #expect(escaped.versionCode == 7 && escaped.platform == "android" && escaped.deviceId == "a/b c")
        #expect(escaped.channel == "")
        let bare = try UpdateCheckQuery(HTTPQuery("platform=ios&versionCode=1&channel&deviceId="))
        #expect(bare.channel == "" && bare.deviceId == nil)
        for bad in [
            nil, "", "versionCode=1", "platform=ios", "platform=&versionCode=1", "platform=ios&versionCode=%zz",
            "platform=i%20os&versionCode=1", "platformx=ios&versionCode=1",
        ] as [String?] {
            #expect(throws: (any Error).self, "\(bad ?? "nil")") { try UpdateCheckQuery(HTTPQuery(bad)) }
        }
    }
}

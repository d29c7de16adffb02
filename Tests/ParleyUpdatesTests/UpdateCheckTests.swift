import Foundation
import ParleyLiveSupport
import Testing

@testable import ParleyUpdates

/// `GET /api/update/check` against a live server and database, releases published through the signed routes.
@Suite("Update checks")
struct UpdateCheckTests {
    @Test func atBelowAndAboveTheNewestRelease() async throws {
        try await UpdatesFixture.run { fx in
            // Before any release: no update, and `info` is an explicit null.
            let empty = try await fx.check(100)
            #expect(empty.status == 200 && empty.code == 0)
            #expect(empty.needsUpdate == false && empty.forceUpdate == false)
            #expect(empty.data["info"] is NSNull)

            try await fx.publishOK(100)
            try await fx.publishOK(110)
            let below = try await fx.check(105)
            #expect(below.needsUpdate == true && below.forceUpdate == false)
            let info = try #require(below.info)
            #expect(info["versionCode"] as? Int == 110)
            #expect(info["versionName"] as? String == "1.0.110")
            #expect(info["releaseNotes"] as? String == "Build 110")
            #expect(info["appStoreUrl"] as? String == "https://apps.apple.com/app/id123")
            #expect(info["downloadUrl"] is NSNull)
            #expect((info["publishedAt"] as? String)?.hasSuffix("Z") == true)
            #expect(try await fx.check(1).offeredVersion == 110)

            let at = try await fx.check(110)
            #expect(at.needsUpdate == false && at.forceUpdate == false && at.offeredVersion == nil)
            let above = try await fx.check(111)
            #expect(above.needsUpdate == false && above.offeredVersion == nil)

            // Platforms and channels are separate version lines; platform is case-insensitive.
            #expect(try await fx.check(1, platform: "android").needsUpdate == false)
            #expect(try await fx.check(1, channel: "beta").needsUpdate == false)
            #expect(try await fx.check(105, platform: "iOS").offeredVersion == 110)
            try await fx.publishOK(5, channel: "beta")
            #expect(try await fx.check(1, channel: "beta").offeredVersion == 5)
        }
    }

    @Test func belowTheMinimumSupportedVersionIsForced() async throws {
        try await UpdatesFixture.run { fx in
            try await fx.publishOK(100)
            try await fx.publishOK(120, minSupported: 105)
            let forced = try await fx.check(104)
            #expect(forced.needsUpdate == true && forced.forceUpdate == true && forced.offeredVersion == 120)
            let optional = try await fx.check(105)
            #expect(optional.needsUpdate == true && optional.forceUpdate == false && optional.offeredVersion == 120)
            // A newer release without a minimum does not lift the older one's.
            try await fx.publishOK(130)
            #expect(try await fx.check(104).forceUpdate == true)
            #expect(try await fx.check(104).offeredVersion == 130)
        }
    }

    @Test func thirtyPercentRolloutReachesAStableThirdOfDevices() async throws {
        try await UpdatesFixture.run { fx in
            try await fx.publishOK(100)
            let partial = try await fx.publishOK(110, rollout: 30)
            var offered: Set<Int> = []
            for device in 0..<1000 {
                let answer = try await fx.check(100, deviceId: "device-\(device)")
                #expect(answer.status == 200)
                if answer.offeredVersion == 110 { offered.insert(device) }
            }
            #expect((250...350).contains(offered.count), "\(offered.count) of 1000 devices")
            // The same answer on every call: a sample of 200 devices, asked again twice.
            for _ in 0..<2 {
                for device in stride(from: 0, to: 1000, by: 5) {
                    let again = try await fx.check(100, deviceId: "device-\(device)")
                    #expect((again.offeredVersion == 110) == offered.contains(device), "device-\(device) flickered")
                }
            }
            // Devices outside the rollout still get the full release when they are older than it.
            let outside = try #require((0..<1000).first { !offered.contains($0) })
            #expect(try await fx.check(90, deviceId: "device-\(outside)").offeredVersion == 100)
            // No device id, no token: a partial rollout is offered to nobody.
            #expect(try await fx.check(100).needsUpdate == false)

            // With a valid access token the user id draws the bucket (the device id is then ignored).
            let session = try Session(try await fx.client.register(appKey: fx.app.appKey, username: "rollout-user"))
            let userOffered = RolloutBucket.isOffered(
                appId: fx.app.id, releaseId: partial, rolloutPercent: 30,
                subject: "u:" + session.userId)
            for device in ["device-0", "device-1", "device-2", "device-3"] {
                let withToken = try await fx.check(100, deviceId: device, token: session.accessToken)
                #expect((withToken.offeredVersion == 110) == userOffered)
            }
            // An invalid token is ignored, not refused: the device id decides.
            let device = "device-\(offered.first!)"
            let badToken = try await fx.check(100, deviceId: device, token: "not-a-token")
            #expect(badToken.status == 200 && badToken.offeredVersion == 110)
        }
    }

    @Test func withdrawnReleasesAreNotOfferedAndTheCheckRightAfterSeesIt() async throws {
        try await UpdatesFixture.run { fx in
            try await fx.publishOK(100)
            #expect(try await fx.check(50).offeredVersion == 100) // cached now
            let bad = try await fx.publishOK(110, minSupported: 100)
            // The publish reached the cache at once.
            #expect(try await fx.check(50).offeredVersion == 110)
            #expect(try await fx.check(50).forceUpdate == true)
            let withdrawn = try await fx.signed("DELETE", "/api/admin/releases/\(bad)")
            #expect(withdrawn.status == 200 && withdrawn.data["withdrawnAt"] is String)
            // Withdrawn: not offered, and its minimum no longer forces anyone.
            let after = try await fx.check(50)
            #expect(after.offeredVersion == 100 && after.forceUpdate == false)
            #expect(try await fx.check(105).needsUpdate == false)
            // The rollout can also be changed and is seen at once.
            let staged = try await fx.publishOK(120, rollout: 0)
            #expect(try await fx.check(105, deviceId: "d1").needsUpdate == false)
            let widened = try await fx.signed("PATCH", "/api/admin/releases/\(staged)", json: ["rolloutPercent": 100])
            #expect(widened.status == 200 && widened.data["rolloutPercent"] as? Int == 100)
            #expect(try await fx.check(105, deviceId: "d1").offeredVersion == 120)
        }
    }

    @Test func aMatchingETagAnswers304() async throws {
        try await UpdatesFixture.run { fx in
            try await fx.publishOK(100)
            let first = try await fx.check(50)
            let etag = try #require(first.header("ETag"))
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count == 34)
            #expect(first.header("Cache-Control") == "private, no-cache")
            let again = try await fx.check(50, headers: ["If-None-Match": etag])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.header("ETag") == etag)
            #expect(try await fx.check(50, headers: ["If-None-Match": "W/\(etag)"]).status == 304)
            #expect(try await fx.check(50, headers: ["If-None-Match": "\"stale\""]).status == 200)
            // Another answer, another tag: an up-to-date caller, and the same caller after a new release.
            let upToDate = try await fx.check(100, headers: ["If-None-Match": etag])
            #expect(upToDate.status == 200 && upToDate.header("ETag") != etag)
            try await fx.publishOK(101)
            let changed = try await fx.check(50, headers: ["If-None-Match": etag])
            #expect(changed.status == 200 && changed.offeredVersion == 101)
            #expect(changed.header("ETag") != etag)
        }
    }

    @Test func badInputAndUnknownApps() async throws {
        try await UpdatesFixture.run { fx in
            #expect(try await fx.check(100, platform: nil).code == 1002)
            #expect(try await fx.check(100, platform: "i%20os").code == 1002)
            #expect(try await fx.check(nil).code == 1002)
            let negative = try await fx.client.get(
                "/api/update/check?platform=ios&versionCode=-1",
                headers: ["X-App-Key": fx.app.appKey])
            #expect(negative.status == 400 && negative.code == 1002)
            #expect(
                try await fx.client.get(
                    "/api/update/check?platform=ios&versionCode=1.5",
                    headers: ["X-App-Key": fx.app.appKey]
                ).code == 1002)
            #expect(try await fx.check(1, channel: "no%20spaces").code == 1002)
            let unknown = try await fx.check(100, appKey: "ak_doesnotexist")
            #expect(unknown.status == 401 && unknown.code == 1039)
            let missing = try await fx.client.get("/api/update/check?platform=ios&versionCode=1")
            #expect(missing.status == 401 && missing.code == 1039)
            #expect(
                try await fx.client.send(
                    "POST", "/api/update/check?platform=ios&versionCode=1",
                    headers: ["X-App-Key": fx.app.appKey]
                ).status == 405)
        }
    }

    @Test func anotherAppsReleasesAreNeverVisible() async throws {
        try await UpdatesFixture.run { fx in
            let id = try await fx.publishOK(100, minSupported: 90)
            let other = try await fx.otherApp()
            let check = try await other.check(1)
            #expect(check.needsUpdate == false && check.forceUpdate == false)
            // The other app's backend cannot read, change or withdraw it, nor see it listed.
            #expect(try await other.signed("GET", "/api/admin/releases/\(id)").code == 1400)
            #expect(
                try await other.signed("PATCH", "/api/admin/releases/\(id)", json: ["rolloutPercent": 0]).code == 1400)
            #expect(try await other.signed("DELETE", "/api/admin/releases/\(id)").code == 1400)
            let listed = try await other.signed("GET", "/api/admin/releases?includeWithdrawn=true")
            #expect((listed.data["releases"] as? [Any])?.isEmpty == true)
            // Its own versionCode line is its own: 100 is free there.
            try await other.publishOK(100)
            #expect(try await fx.check(95).offeredVersion == 100)
            #expect(try await fx.check(50).forceUpdate == true)
            #expect(try await other.check(50).forceUpdate == false)
            // The first app's token does not change the second app's answer (token of another app: ignored).
            let session = try Session(try await fx.client.register(appKey: fx.app.appKey, username: "someone"))
            #expect(try await other.check(50, token: session.accessToken).offeredVersion == 100)
        }
    }
}

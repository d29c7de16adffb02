import Foundation
import ParleyLiveSupport
import Testing

/// `/api/admin/releases`: signed with the app secret; versionCode increases per platform and channel.
@Suite("Release admin routes")
struct ReleaseAdminTests {
    @Test func publishingNeedsAValidSignature() async throws {
        try await UpdatesFixture.run { fx in
            let unsigned = try await fx.client.post(
                "/api/admin/releases", json: ["platform": "ios"],
                headers: ["X-App-Key": fx.app.appKey])
            #expect(unsigned.status == 401 && unsigned.code == 1038)
            let noKey = try await fx.client.post("/api/admin/releases", json: ["platform": "ios"])
            #expect(noKey.status == 401 && noKey.code == 1039)
            let json: [String: Any] = [
                "platform": "ios", "versionCode": 1, "versionName": "1.0",
                "appStoreUrl": "https://apps.apple.com/app/id1",
            ]
            let wrongSecret = try await fx.signed("POST", "/api/admin/releases", json: json, secret: "as_wrong")
            #expect(wrongSecret.status == 401 && wrongSecret.code == 1038)
            // Signed for another body (e.g. a changed versionCode on the way).
            let tampered = try await fx.signed("POST", "/api/admin/releases", json: json) { headers in
                headers["X-Signature"] = String(repeating: "0", count: 64)
            }
            #expect(tampered.code == 1038)
            let stale = try await fx.signed("POST", "/api/admin/releases", json: json) { $0["X-Timestamp"] = "1000" }
            #expect(stale.code == 1038)
            // Reads are signed too.
            #expect(try await fx.client.get("/api/admin/releases", headers: ["X-App-Key": fx.app.appKey]).code == 1038)
            #expect(try await fx.check(0).needsUpdate == false) // nothing was published

            let created = try await fx.signed("POST", "/api/admin/releases", json: json)
            #expect(created.status == 201 && created.code == 0)
            #expect(
                Set(created.data.keys) == [
                    "id", "platform", "channel", "versionCode", "versionName", "releaseNotes",
                    "appStoreUrl", "downloadUrl", "minSupportedVersionCode", "rolloutPercent",
                    "publishedAt", "withdrawnAt", "updatedAt",
                ])
            #expect(created.data["channel"] as? String == "")
            #expect(created.data["rolloutPercent"] as? Int == 100)
            #expect(created.data["releaseNotes"] as? String == "")
            #expect(created.data["minSupportedVersionCode"] is NSNull)
            #expect(created.data["withdrawnAt"] is NSNull)
        }
    }

    @Test func versionCodeMustIncreasePerPlatformAndChannel() async throws {
        try await UpdatesFixture.run { fx in
            let first = try await fx.publishOK(100)
            let same = try await fx.publish(100)
            #expect(same.status == 409 && same.code == 1401)
            #expect(same.message?.contains("above 100") == true)
            #expect(try await fx.publish(99).code == 1401)
            // Withdrawn releases keep their versionCode taken.
            #expect(try await fx.signed("DELETE", "/api/admin/releases/\(first)").status == 200)
            #expect(try await fx.publish(100).code == 1401)
            #expect(try await fx.publish(101).status == 201)
            // Other platforms and channels have their own lines.
            #expect(try await fx.publish(1, platform: "android").status == 201)
            #expect(try await fx.publish(1, channel: "beta").status == 201)
            #expect(try await fx.publish(1, channel: "beta").code == 1401)

            // Concurrent publishes of one versionCode: exactly one wins.
            let results = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 { group.addTask { try await fx.publish(200).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(results.sorted() == [201, 409, 409, 409])
        }
    }

    @Test func publishValidatesItsInput() async throws {
        try await UpdatesFixture.run { fx in
            let noURL = try await fx.publish(1, extra: ["appStoreUrl": NSNull()])
            #expect(noURL.status == 400 && noURL.code == 1002)
            #expect(try await fx.publish(1, rollout: 101).code == 1002)
            #expect(try await fx.publish(1, rollout: -1).code == 1002)
            #expect(try await fx.publish(10, minSupported: 11).code == 1002)
            #expect(try await fx.publish(-1).code == 1002)
            #expect(try await fx.publish(1, platform: "i/os").code == 1002)
            #expect(try await fx.publish(1, channel: "Beta Channel").code == 1002)
            #expect(try await fx.publish(1, versionName: "").code == 1002)
            #expect(try await fx.publish(1, extra: ["appStoreUrl": "not a url"]).code == 1002)
            #expect(try await fx.publish(1, extra: ["versionCode": "1"]).code == 1002)
            #expect(
                try await fx.publish(1, extra: ["releaseNotes": String(repeating: "x", count: 10_001)]).code == 1002)
            #expect(try await fx.signed("POST", "/api/admin/releases", json: [:]).code == 1002)
            // Nothing was stored.
            let listed = try await fx.signed("GET", "/api/admin/releases?includeWithdrawn=true")
            #expect((listed.data["releases"] as? [Any])?.count == 0)
        }
    }

    @Test func listUpdateAndWithdraw() async throws {
        try await UpdatesFixture.run { fx in
            let a = try await fx.publishOK(100)
            let b = try await fx.publishOK(110, rollout: 10)
            try await fx.publishOK(7, platform: "android")
            try await fx.publishOK(3, channel: "beta")

            let all = try await fx.signed("GET", "/api/admin/releases")
            let releases = try #require(all.data["releases"] as? [[String: Any]])
            // Ordered by platform (android < ios), then channel ("" < beta).
            #expect(releases.map { $0["versionCode"] as? Int } == [7, 110, 100, 3] as [Int?])
            #expect(all.data["hasMore"] as? Bool == false)
            let ios = try await fx.signed("GET", "/api/admin/releases?platform=ios&channel=")
            #expect(
                (ios.data["releases"] as? [[String: Any]])?.map { $0["versionCode"] as? Int } == [110, 100] as [Int?])
            let page = try await fx.signed("GET", "/api/admin/releases?limit=1")
            #expect((page.data["releases"] as? [Any])?.count == 1 && page.data["hasMore"] as? Bool == true)
            #expect(try await fx.signed("GET", "/api/admin/releases?limit=0").code == 1002)
            #expect(try await fx.signed("GET", "/api/admin/releases?includeWithdrawn=maybe").code == 1002)
            #expect(try await fx.signed("GET", "/api/admin/releases/\(b)").data["rolloutPercent"] as? Int == 10)

            // PATCH: absent fields stay, null clears, the whole must stay valid.
            let patched = try await fx.signed(
                "PATCH", "/api/admin/releases/\(b)",
                json: [
                    "rolloutPercent": 50, "releaseNotes": "Fixes", "downloadUrl": "https://example.com/b.ipa",
                    "minSupportedVersionCode": 100,
                ])
            #expect(patched.status == 200)
            #expect(patched.data["rolloutPercent"] as? Int == 50 && patched.data["releaseNotes"] as? String == "Fixes")
            #expect(patched.data["minSupportedVersionCode"] as? Int == 100)
            #expect(patched.data["appStoreUrl"] as? String == "https://apps.apple.com/app/id123")
            let cleared = try await fx.signed(
                "PATCH", "/api/admin/releases/\(b)", json: ["minSupportedVersionCode": NSNull()])
            #expect(cleared.data["minSupportedVersionCode"] is NSNull)
            // An iOS release keeps its App Store URL, even with a download URL beside it.
            let noStoreURL = try await fx.signed(
                "PATCH", "/api/admin/releases/\(b)", json: ["appStoreUrl": NSNull()])
            #expect(noStoreURL.status == 400 && noStoreURL.code == 1002)
            #expect(noStoreURL.message?.contains("appStoreUrl") == true)
            #expect(
                try await fx.signed("GET", "/api/admin/releases/\(b)").data["appStoreUrl"] as? String
                    == "https://apps.apple.com/app/id123")
            // The App Store URL alone is enough.
            #expect(
                try await fx.signed("PATCH", "/api/admin/releases/\(b)", json: ["downloadUrl": NSNull()]).status == 200)
            #expect(
                try await fx.signed("PATCH", "/api/admin/releases/\(b)", json: ["minSupportedVersionCode": 111]).code
                    == 1002)
            #expect(try await fx.signed("PATCH", "/api/admin/releases/\(b)", json: [:]).code == 1002)
            #expect(
                try await fx.signed("PATCH", "/api/admin/releases/\(b)", json: ["rolloutPercent": 200]).code == 1002)

            // DELETE withdraws (idempotent); withdrawn releases cannot be changed and are listed only on request.
            let withdrawn = try await fx.signed("DELETE", "/api/admin/releases/\(a)")
            #expect(withdrawn.status == 200)
            let withdrawnAt = try #require(withdrawn.data["withdrawnAt"] as? String)
            let again = try await fx.signed("DELETE", "/api/admin/releases/\(a)")
            #expect(again.status == 200 && again.data["withdrawnAt"] as? String == withdrawnAt)
            let frozen = try await fx.signed("PATCH", "/api/admin/releases/\(a)", json: ["rolloutPercent": 5])
            #expect(frozen.status == 409 && frozen.code == 1402)
            let visible = try await fx.signed("GET", "/api/admin/releases?platform=ios&channel=")
            #expect((visible.data["releases"] as? [[String: Any]])?.map { $0["id"] as? Int } == [Int(b)])
            let history = try await fx.signed("GET", "/api/admin/releases?platform=ios&channel=&includeWithdrawn=true")
            #expect((history.data["releases"] as? [Any])?.count == 2)

            for id in ["999999", "0", "abc", "-1"] {
                let missing = try await fx.signed("DELETE", "/api/admin/releases/\(id)")
                #expect(missing.status == 404 && missing.code == 1400)
            }
        }
    }
}

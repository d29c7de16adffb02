import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

@testable import ParleyFiles

/// Storage quotas per user and per app (counters kept by triggers, migrations/0016) and the upload rate.
@Suite(.serialized) struct QuotaTests {
    /// The counters against a scan of the rows they stand for.
    static func expectCountersMatchRows(_ fx: FilesFixture) async throws {
        let mismatchedUsers = try await fx.count(
            """
            SELECT count(*) FROM (
                SELECT app_id, owner_id AS user_id, sum(size) AS bytes FROM files GROUP BY 1, 2) s
            FULL JOIN (SELECT * FROM file_user_usage WHERE bytes <> 0) u USING (app_id, user_id)
            WHERE s.bytes IS DISTINCT FROM u.bytes
            """)
        #expect(mismatchedUsers == 0)
        let mismatchedApps = try await fx.count(
            """
            SELECT count(*) FROM (SELECT app_id, sum(size) AS bytes FROM file_blobs GROUP BY 1) s
            FULL JOIN (SELECT * FROM file_app_usage WHERE bytes <> 0) u USING (app_id)
            WHERE s.bytes IS DISTINCT FROM u.bytes
            """)
        #expect(mismatchedApps == 0)
    }

    @Test func usageCountsEveryUploadPerUserAndEachContentOncePerApp() async throws {
        try await FilesFixture.run(environment: ["PARLEY_FILES_SWEEP_GRACE_SECONDS": "0"]) { fx in
            let users = try await fx.messaging.users(2)
            let (alice, bob) = (users[0], users[1])
            let repository = fx.files.repository
            let appId = fx.messaging.appId
            let first = patternBytes(30_000, seed: 1)
            let second = patternBytes(20_000, seed: 2)
            _ = try await fx.upload(alice, first)
            _ = try await fx.upload(alice, first) // the same content again: the user pays, the app does not
            _ = try await fx.upload(bob, first)
            _ = try await fx.upload(alice, second)
            #expect(try await repository.usage(appId: appId, userId: alice.userId) == (80_000, 50_000))
            #expect(try await repository.usage(appId: appId, userId: bob.userId) == (30_000, 50_000))
            try await Self.expectCountersMatchRows(fx)

            // The sweeper's deletes (nothing references these files) take the bytes back in their transactions.
            let report = try await fx.files.sweep()
            #expect(report.files == 4)
            #expect(report.blobs == 2)
            #expect(try await repository.usage(appId: appId, userId: alice.userId) == (0, 0))
            #expect(try await repository.usage(appId: appId, userId: bob.userId) == (0, 0))
            try await Self.expectCountersMatchRows(fx)
        }
    }

    @Test func uploadsPastTheUserQuotaAnswer1315AndKeepNothing() async throws {
        try await FilesFixture.run(environment: ["PARLEY_FILES_USER_QUOTA_BYTES": "100000"]) { fx in
            let users = try await fx.messaging.users(2)
            let (alice, bob) = (users[0], users[1])
            _ = try await fx.upload(alice, patternBytes(60_000, seed: 1))
            // Refused from Content-Length, before the body is read.
            let refused = try await fx.put(alice, patternBytes(60_000, seed: 2))
            #expect(refused.status == 413)
            #expect(refused.code == 1315)
            // Without a length (chunked), the spool stops at what the quota leaves.
            let chunked = try await Self.putChunked(fx, alice, patternBytes(60_000, seed: 3))
            #expect(chunked.status == 413)
            #expect(chunked.code == 1315)
            // A multipart form counts its file and thumbnail together.
            let form = FilesFixture.multipartBody([
                ("file", "a.bin", nil, patternBytes(30_000, seed: 4)),
                ("thumbnail", "t.png", "image/png", tinyPNG + patternBytes(20_000, seed: 5)),
            ])
            let multipart = try await fx.postMultipart(alice, form)
            #expect(multipart.status == 413)
            #expect(multipart.code == 1315)
            #expect(try await fx.count("SELECT count(*) FROM files") == 1)
            #expect(try await fx.count("SELECT count(*) FROM file_blobs") == 1)
            // What fits still goes; other users have quotas of their own.
            _ = try await fx.upload(alice, patternBytes(40_000, seed: 6))
            _ = try await fx.upload(bob, patternBytes(60_000, seed: 7))
            // An app's own quota overrides the server's (here: none).
            var update = FileRepository.SettingsUpdate()
            update.userQuotaBytes = 0
            try await fx.files.repository.updateSettings(appId: fx.messaging.appId, update)
            _ = try await fx.upload(alice, patternBytes(60_000, seed: 8))
            try await Self.expectCountersMatchRows(fx)
            #expect(fx.live.app.metrics.render().contains(#"parley_quota_refusals_total{kind="storage_user"} 3"#))
        }
    }

    @Test func theAppQuotaCountsOnlyNewContent() async throws {
        let environment = ["PARLEY_FILES_USER_QUOTA_BYTES": "0", "PARLEY_FILES_APP_QUOTA_BYTES": "100000"]
        try await FilesFixture.run(environment: environment) { fx in
            let users = try await fx.messaging.users(2)
            let (alice, bob) = (users[0], users[1])
            let shared = patternBytes(60_000, seed: 1)
            _ = try await fx.upload(alice, shared)
            _ = try await fx.upload(bob, shared) // stored already: costs the app nothing
            let refused = try await fx.put(bob, patternBytes(60_000, seed: 2))
            #expect(refused.status == 413)
            #expect(refused.code == 1316)
            #expect(try await fx.count("SELECT count(*) FROM file_blobs") == 1)
            #expect(try await fx.count("SELECT count(*) FROM file_storage_garbage") == 0) // refused before storing
            #expect(fx.live.app.metrics.render().contains(#"parley_quota_refusals_total{kind="storage_app"} 1"#))
        }
    }

    /// The commit's own check, under the counters' row locks: what holds when concurrent uploads all passed the
    /// checks made before them. Refused, the transaction leaves no row and no change in the counters.
    @Test func theCommitRefusesPastTheQuotaInItsTransaction() async throws {
        try await FilesFixture.run { fx in
            let alice = try await fx.messaging.users(1)[0]
            let repository = fx.files.repository
            let appId = fx.messaging.appId
            _ = try await fx.upload(alice, patternBytes(1_000, seed: 1))
            func insert(_ sha: Character, size: Int64, quota: StorageQuota) async throws -> String {
                try await repository.insert(
                    appId: appId, sha256: String(repeating: sha, count: 64), size: size, storageKey: "test/\(sha)",
                    files: [
                        FileRepository.NewFile(
                            objectKey: ObjectKey.generate(appId: appId), ownerId: alice.userId, mimeType: "x/y",
                            ext: "bin", name: "n", thumbnailKey: nil)
                    ], quota: quota)
            }
            let userQuota = StorageQuota(userQuotaBytes: 1_500, appQuotaBytes: nil, userBytes: 0, appBytes: 0)
            await #expect(throws: StorageQuotaExceeded.self) { _ = try await insert("a", size: 600, quota: userQuota) }
            let appQuota = StorageQuota(userQuotaBytes: nil, appQuotaBytes: 1_500, userBytes: 0, appBytes: 0)
            await #expect(throws: StorageQuotaExceeded.self) { _ = try await insert("b", size: 600, quota: appQuota) }
            #expect(try await repository.usage(appId: appId, userId: alice.userId) == (1_000, 1_000))
            #expect(try await fx.count("SELECT count(*) FROM file_blobs") == 1)
            _ = try await insert("c", size: 500, quota: userQuota) // exactly at the quota
            #expect(try await repository.usage(appId: appId, userId: alice.userId) == (1_500, 1_500))
        }
    }

    @Test func uploadsPastTheRateAnswer1317WithRetryAfter() async throws {
        try await FilesFixture.run(environment: ["PARLEY_FILES_UPLOADS_PER_MINUTE": "1"]) { fx in
            let users = try await fx.messaging.users(2)
            _ = try await fx.upload(users[0], patternBytes(100, seed: 1))
            let refused = try await fx.put(users[0], patternBytes(100, seed: 2))
            #expect(refused.status == 429)
            #expect(refused.code == 1317)
            #expect((1...60).contains(refused.header("Retry-After").flatMap(Int.init) ?? 0))
            _ = try await fx.upload(users[1], patternBytes(100, seed: 3))
            #expect(fx.live.app.metrics.render().contains(#"parley_quota_refusals_total{kind="upload_rate"} 1"#))
        }
    }

    /// `PUT /api/files` with a chunked body: no length to check up front.
    static func putChunked(_ fx: FilesFixture, _ session: Session, _ bytes: [UInt8]) async throws -> TestResponse {
        let port = fx.live.port
        return try await onDedicatedThread {
            let client = try RawHTTPClient(port: port, timeoutSeconds: 30)
            var request = Array(
                ("PUT /api/files HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
                    + "Authorization: Bearer \(session.accessToken)\r\nTransfer-Encoding: chunked\r\n\r\n").utf8)
            var offset = 0
            while offset < bytes.count {
                let chunk = bytes[offset..<min(bytes.count, offset + 16_384)]
                request += Array((String(chunk.count, radix: 16) + "\r\n").utf8) + chunk + Array("\r\n".utf8)
                offset += chunk.count
            }
            request += Array("0\r\n\r\n".utf8)
            // The server may answer and close before it has read everything.
            try? client.send(request)
            let response = try client.readResponse()
            return TestResponse(status: response.status, headers: response.headers, body: response.body)
        }
    }
}

import Foundation
import ParleyCrypto
import ParleyFiles
import ParleyHTTPClient
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// The whole file service with `PARLEY_FILES_BACKEND=s3` against moto: upload, signed URL, 302 to a presigned S3
/// URL, the same bytes back; dedup; the sweeper deletes the S3 object.
@Suite(.serialized, .enabled(if: MotoServer.executable != nil, MotoServer.skipReason))
struct FileServiceS3Tests {
    @Test func uploadAndDownloadRoundTripThroughS3() async throws {
        let moto = try await MotoServer()
        defer { moto.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let environment = [
            "PARLEY_FILES_BACKEND": "s3", "PARLEY_S3_ENDPOINT": moto.endpoint, "PARLEY_S3_BUCKET": "parley-live",
            "PARLEY_S3_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
            "PARLEY_S3_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "PARLEY_FILES_SWEEP_GRACE_SECONDS": "0",
        ]
        try await FilesFixture.run(environment: environment) { fx in
            try await fx.files.storage.prepare()
            let alice = try await fx.messaging.users(1)[0]
            let bytes = patternBytes(3 * 1024 * 1024 + 17, seed: 3)
            let data = try await fx.upload(alice, bytes, name: "clip.bin")
            #expect(data["hash"] as? String == Hex.encode(SHA256.hash(bytes)))
            let redirect = try await fx.fetch(data["url"] as! String)
            #expect(redirect.status == 302)
            let location = try #require(redirect.header("location"))
            #expect(location.hasPrefix(moto.endpoint + "/parley-live/"))
            #expect(location.contains("X-Amz-Signature="))
            let fetched = try await client.execute(HTTPClientRequest(url: location))
            #expect(fetched.status == 200)
            #expect(fetched.body == bytes)
            #expect(fetched.header("content-disposition")?.contains("clip.bin") == true)
            // A second upload of the same bytes is stored once.
            _ = try await fx.upload(alice, bytes, name: "again.bin")
            #expect(try await fx.count("SELECT count(*) FROM file_blobs") == 1)
            // Nothing references them: the sweeper removes both rows, the blob row and the S3 object.
            let storageKey: String = try await fx.messaging.database.query("SELECT storage_key FROM file_blobs")[0]
                .decode("storage_key")
            #expect(try await fx.files.storage.exists(key: storageKey))
            let report = try await fx.files.sweep()
            #expect(report.files == 2)
            #expect(report.objectsDeleted == 1)
            #expect(try await fx.files.storage.exists(key: storageKey) == false)
            // S3 answers with the download's safe type and disposition, not what the client declared; the redirect
            // itself carries the headers every `/files/` answer does.
            let html = try await fx.upload(
                alice, Array("<html><script>alert(1)</script>".utf8), name: "a.html", type: "text/html")
            let htmlRedirect = try await fx.fetch(html["url"] as! String)
            #expect(htmlRedirect.status == 302)
            #expect(htmlRedirect.header("content-security-policy") == "default-src 'none'; sandbox")
            #expect(htmlRedirect.header("cross-origin-resource-policy") == "same-site")
            let htmlFetched = try await client.execute(
                HTTPClientRequest(url: try #require(htmlRedirect.header("location"))))
            #expect(htmlFetched.status == 200)
            #expect(htmlFetched.header("content-type") == "application/octet-stream")
            #expect(htmlFetched.header("content-disposition")?.hasPrefix("attachment;") == true)
            #expect(fx.storedFiles("spool").isEmpty)
        }
    }
}

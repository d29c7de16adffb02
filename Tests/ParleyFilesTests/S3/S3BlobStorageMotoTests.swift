import Foundation
import ParleyCrypto
import ParleyHTTPClient
import Testing

@testable import ParleyFiles

/// `S3BlobStorage` against moto_server. moto does not check signatures by default (nor x-amz-content-sha256
/// against the body); `headerSignaturesAreVerifiedByMoto` turns its IAM authentication on to check them.
@Suite(.enabled(if: MotoServer.executable != nil, MotoServer.skipReason))
struct S3BlobStorageMotoTests {
    @Test func storeExistsDownloadDeleteRoundTrip() async throws {
        let moto = try await MotoServer()
        defer { moto.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let storage = try S3BlobStorage(configuration: configuration(moto, bucket: "parley-round-trip"), client: client)
        try await storage.ensureBucket()
        try await storage.ensureBucket() // a second start finds it

        let content = randomBytes(count: 5 * 1024 * 1024 + 123)
        let sha256 = Hex.encode(SHA256.hash(content))
        let key = "7/\(sha256.prefix(2))/\(sha256)"
        let spool = try spoolFile(content)
        try await storage.store(
            spoolPath: spool, key: key, size: Int64(content.count), sha256Hex: sha256,
            contentType: "image/png")
        #expect(!FileManager.default.fileExists(atPath: spool), "the spool file is consumed")
        #expect(try await storage.exists(key: key))

        let disposition = "attachment; filename=\"holiday photo.png\"; filename*=UTF-8''holiday%20ph%C3%B6to.png"
        let download = try storage.download(
            key: key, expiresAt: Int64(Date().timeIntervalSince1970) + 300,
            contentType: "image/png", contentDisposition: disposition)
        let url = try #require(download.redirectURL)
        #expect(url.hasPrefix(moto.endpoint + "/parley-round-trip/\(key)?"))
        let fetched = try await client.execute(HTTPClientRequest(url: url))
        #expect(fetched.status == 200)
        #expect(fetched.body.count == content.count)
        #expect(fetched.body == content)
        #expect(fetched.header("content-type") == "image/png")
        #expect(fetched.header("content-disposition") == disposition)

        // The same content again (a second upload of one file) is fine and still consumes its spool file.
        let again = try spoolFile(content)
        try await storage.store(
            spoolPath: again, key: key, size: Int64(content.count), sha256Hex: sha256,
            contentType: "image/png")
        #expect(!FileManager.default.fileExists(atPath: again))

        try await storage.delete(key: key)
        #expect(try await storage.exists(key: key) == false)
        try await storage.delete(key: key) // deleting a missing blob is not an error
        // The URL is still validly signed, but there is nothing behind it (moto answers 403, as S3 does to a
        // requester without s3:ListBucket).
        let gone = try await client.execute(HTTPClientRequest(url: url))
        #expect([403, 404].contains(gone.status))
    }

    @Test func failuresAreTypedAndStillConsumeTheSpoolFile() async throws {
        let moto = try await MotoServer()
        defer { moto.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let storage = try S3BlobStorage(
            configuration: configuration(moto, bucket: "parley-never-created"), client: client)

        let spool = try spoolFile(Array("hello".utf8))
        await #expect {
            try await storage.store(
                spoolPath: spool, key: "k", size: 5, sha256Hex: Hex.encode(SHA256.hash(Array("hello".utf8))),
                contentType: "text/plain")
        } throws: { error in
            guard case .service(404, "NoSuchBucket", _, _) = error as? S3Error else { return false }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: spool))

        let badHash = try spoolFile(Array("hello".utf8))
        await #expect(throws: S3Error.invalidPayloadHash("ABC")) {
            try await storage.store(spoolPath: badHash, key: "k", size: 5, sha256Hex: "ABC", contentType: "text/plain")
        }
        #expect(!FileManager.default.fileExists(atPath: badHash))

        let unreachable = try S3BlobStorage(
            configuration: S3Configuration(
                endpoint: "http://127.0.0.1:1", region: "us-east-1", bucket: "parley-x",
                accessKeyID: "a", secretAccessKey: "s"),
            client: client)
        await #expect {
            _ = try await unreachable.exists(key: "k")
        } throws: { error in
            guard case .transport(.connectFailed) = error as? S3Error else { return false }
            return true
        }
    }

    /// moto checks header signatures (with its own botocore-based SigV4) once IAM authentication is on, against
    /// keys it issued. It cannot check presigned URLs that way: in this mode moto 5.2.5 answers 500 to any request
    /// without an Authorization header, so presigning is covered by AWS's published example instead.
    @Test func headerSignaturesAreVerifiedByMoto() async throws {
        let moto = try await MotoServer(authenticatedAfter: 3)
        defer { moto.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let (keyID, secret) = try await createAccessKey(moto, client)

        let storage = try S3BlobStorage(
            configuration: configuration(moto, bucket: "parley-signed", keyID: keyID, secret: secret),
            client: client)
        try await storage.ensureBucket()
        // A key with characters that SigV4 percent-encodes in the path.
        let key = "7/ab/odd key+with~chars$&=@é.bin"
        let content = randomBytes(count: 300_000)
        try await storage.store(
            spoolPath: try spoolFile(content), key: key, size: Int64(content.count),
            sha256Hex: Hex.encode(SHA256.hash(content)), contentType: "application/octet-stream")
        #expect(try await storage.exists(key: key))
        try await storage.delete(key: key)
        #expect(try await storage.exists(key: key) == false)

        let forged = try S3BlobStorage(
            configuration: configuration(
                moto, bucket: "parley-signed", keyID: keyID,
                secret: "not-the-secret"), client: client)
        let spool = try spoolFile(content)
        await #expect {
            try await forged.store(
                spoolPath: spool, key: key, size: Int64(content.count),
                sha256Hex: Hex.encode(SHA256.hash(content)), contentType: "application/octet-stream")
        } throws: { error in
            guard case .service(403, "SignatureDoesNotMatch", _, _) = error as? S3Error else { return false }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: spool))
        #expect(try await storage.exists(key: key) == false)
    }

    // MARK: Helpers

    private func configuration(
        _ moto: MotoServer, bucket: String, keyID: String = "AKIAIOSFODNN7EXAMPLE",
        secret: String = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    ) -> S3Configuration {
        S3Configuration(
            endpoint: moto.endpoint, region: "us-east-1", bucket: bucket, accessKeyID: keyID,
            secretAccessKey: secret, requestTimeout: .seconds(60))
    }

    /// An IAM user allowed everything, and a key of its; the three IAM calls use up moto's unauthenticated ones.
    private func createAccessKey(_ moto: MotoServer, _ client: HTTPClient) async throws -> (String, String) {
        let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}"#
        _ = try await iam(moto, client, ["Action": "CreateUser", "UserName": "parley"])
        _ = try await iam(
            moto, client,
            [
                "Action": "PutUserPolicy", "UserName": "parley", "PolicyName": "all",
                "PolicyDocument": policy,
            ])
        let created = try await iam(moto, client, ["Action": "CreateAccessKey", "UserName": "parley"])
        let keyID = try #require(S3Error.xmlElement("AccessKeyId", in: created))
        let secret = try #require(S3Error.xmlElement("SecretAccessKey", in: created))
        return (keyID, secret)
    }

    /// One IAM Query API call (a signed form POST); returns the response document.
    private func iam(_ moto: MotoServer, _ client: HTTPClient, _ parameters: [String: String]) async throws -> String {
        let form = (parameters.merging(["Version": "2010-05-08"]) { old, _ in old })
            .map { "\(AWSURIEncoding.encode($0.key))=\(AWSURIEncoding.encode($0.value))" }.joined(separator: "&")
        let body = Array(form.utf8)
        let signer = AWSSignatureV4(
            accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "unchecked", region: "us-east-1",
            service: "iam")
        let request = AWSRequest(
            method: "POST", scheme: "http", host: "127.0.0.1:\(moto.port)", path: "/",
            headers: [("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")])
        let headers = signer.signedHeaders(
            for: request, payloadHash: Hex.encode(SHA256.hash(body)),
            at: AWSTimestamp(unixSeconds: Int64(Date().timeIntervalSince1970)))
        let response = try await client.execute(
            HTTPClientRequest(
                method: "POST", url: request.url, headers: headers,
                body: .bytes(body)))
        let document = String(decoding: response.body, as: UTF8.self)
        try #require(response.status == 200, "IAM \(parameters["Action"]!) answered \(response.status): \(document)")
        return document
    }

    private func randomBytes(count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            var index = 0
            while index < count {
                var word = generator.next()
                for _ in 0..<min(8, count - index) {
                    buffer[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
        }
        return bytes
    }

    private func spoolFile(_ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "parley-spool-" + UUID().uuidString
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}

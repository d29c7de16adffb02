import Glibc
import ParleyCrypto
import ParleyHTTPClient

/// Blobs as objects of one S3 bucket (AWS, MinIO, any S3-compatible store), over `HTTPClient` with SigV4-signed
/// requests. Uploads stream from the spool file with its SHA-256 as the signed payload hash, so S3 itself
/// refuses a body that does not match. Downloads are redirects to presigned GET URLs that carry the response's
/// `Content-Type` and `Content-Disposition`, so blob bytes never pass through Parley.
public final class S3BlobStorage: BlobStorage {
    public let kind = "s3"
    public let configuration: S3Configuration
    private let client: HTTPClient
    private let signer: AWSSignatureV4
    private let endpoint: S3Endpoint
    private let presignEndpoint: S3Endpoint
    private let now: @Sendable () -> Int64

    /// - Parameter now: the wall clock in Unix seconds (request dates, presigned URL lifetimes); tests inject one.
    public init(
        configuration: S3Configuration, client: HTTPClient,
        now: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }
    ) throws(S3Error) {
        guard let endpoint = S3Endpoint(configuration.endpoint) else {
            throw .invalidConfiguration("endpoint must be http(s)://host[:port], not \(configuration.endpoint)")
        }
        guard let presignEndpoint = S3Endpoint(configuration.presignEndpoint ?? configuration.endpoint) else {
            throw .invalidConfiguration("presign endpoint must be http(s)://host[:port]")
        }
        // S3's bucket naming rules, loosely: anything else would not survive a Host name or a path segment.
        let bucket = configuration.bucket
        guard (3...63).contains(bucket.utf8.count),
            bucket.utf8.allSatisfy({ Self.isBucketNameByte($0) }),
            configuration.pathStyle || !bucket.contains(".")
        else {
            throw .invalidConfiguration("bucket name \(bucket) is not a valid S3 bucket name")
        }
        self.configuration = configuration
        self.client = client
        self.endpoint = endpoint
        self.presignEndpoint = presignEndpoint
        self.now = now
        signer = AWSSignatureV4(
            accessKeyID: configuration.accessKeyID, secretAccessKey: configuration.secretAccessKey,
            region: configuration.region, service: "s3", sessionToken: configuration.sessionToken)
    }

    // MARK: BlobStorage

    public func store(spoolPath: String, key: String, size: Int64, sha256Hex: String, contentType: String)
        async throws(S3Error)
    {
        // The spool file is consumed whatever happens; a failed upload is retried from a new spool.
        defer { unlink(spoolPath) }
        guard sha256Hex.utf8.count == 64, sha256Hex.utf8.allSatisfy(Self.isLowercaseHexByte) else {
            throw .invalidPayloadHash(sha256Hex)
        }
        let request = objectRequest(
            "PUT", key: key,
            headers: [
                ("Content-Type", contentType.isEmpty ? "application/octet-stream" : contentType)
            ])
        let response = try await send(
            request, body: .file(path: spoolPath, offset: 0, length: size),
            payloadHash: sha256Hex)
        guard response.status == 200 else { throw S3Error.from(response) }
    }

    public func delete(key: String) async throws(S3Error) {
        let response = try await send(objectRequest("DELETE", key: key))
        // S3 answers 204 for missing keys too; some compatible stores answer 404.
        guard [200, 204, 404].contains(response.status) else { throw S3Error.from(response) }
    }

    public func exists(key: String) async throws(S3Error) -> Bool {
        let response = try await send(objectRequest("HEAD", key: key))
        switch response.status {
        case 200: return true
        case 404: return false
        default: throw S3Error.from(response)
        }
    }

    /// A presigned GET valid until `expiresAt` (at least one second, at most S3's seven days), whose response
    /// carries `contentType` and `contentDisposition` (S3's `response-content-*` overrides: the download's safe type
    /// and disposition, whatever the object's metadata says). S3 has no override for `Content-Security-Policy`,
    /// `Cross-Origin-Resource-Policy` or `X-Content-Type-Options`: a bucket on the API's site needs them added by
    /// the CDN or proxy in front of it (README, "Serving files from a separate origin").
    public func download(key: String, expiresAt: Int64, contentType: String, contentDisposition: String)
        throws(S3Error) -> BlobDownload
    {
        let time = now()
        let lifetime = Int(min(max(expiresAt - time, 1), Int64(AWSSignatureV4.maxPresignedExpiry)))
        var query: [(String, String)] = []
        if !contentType.isEmpty { query.append(("response-content-type", contentType)) }
        if !contentDisposition.isEmpty { query.append(("response-content-disposition", contentDisposition)) }
        let request = objectRequest("GET", key: key, query: query, endpoint: presignEndpoint)
        return .redirect(url: signer.presignedURL(for: request, expires: lifetime, at: AWSTimestamp(unixSeconds: time)))
    }

    // MARK: Bucket

    /// Creates the bucket unless it exists (first start, tests). Outside us-east-1 the region goes in the body,
    /// as S3 requires.
    public func prepare() async throws { try await ensureBucket() }

    public func ensureBucket() async throws(S3Error) {
        let head = try await send(bucketRequest("HEAD"))
        if head.status == 200 { return }
        guard head.status == 404 else { throw S3Error.from(head) }

        var body: [UInt8] = []
        if configuration.region != "us-east-1" {
            body = Array(
                ("<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                    + "<LocationConstraint>\(configuration.region)</LocationConstraint></CreateBucketConfiguration>")
                    .utf8)
        }
        let created = try await send(
            bucketRequest("PUT"), body: body.isEmpty ? .none : .bytes(body),
            payloadHash: Hex.encode(SHA256.hash(body)))
        if created.status == 200 { return }
        let error = S3Error.from(created)
        // Another instance created it in between.
        if case .service(_, "BucketAlreadyOwnedByYou", _, _) = error { return }
        throw error
    }

    // MARK: Requests

    private func objectRequest(
        _ method: String, key: String, query: [(String, String)] = [],
        headers: [(String, String)] = [], endpoint: S3Endpoint? = nil
    ) -> AWSRequest {
        let endpoint = endpoint ?? self.endpoint
        if configuration.pathStyle {
            return AWSRequest(
                method: method, scheme: endpoint.scheme, host: endpoint.host,
                path: "/\(configuration.bucket)/\(key)", query: query, headers: headers)
        }
        return AWSRequest(
            method: method, scheme: endpoint.scheme, host: "\(configuration.bucket).\(endpoint.host)",
            path: "/\(key)", query: query, headers: headers)
    }

    private func bucketRequest(_ method: String) -> AWSRequest {
        if configuration.pathStyle {
            return AWSRequest(
                method: method, scheme: endpoint.scheme, host: endpoint.host,
                path: "/\(configuration.bucket)")
        }
        return AWSRequest(
            method: method, scheme: endpoint.scheme, host: "\(configuration.bucket).\(endpoint.host)",
            path: "/")
    }

    private func send(
        _ request: AWSRequest, body: HTTPClientBody = .none,
        payloadHash: String = AWSSignatureV4.emptyPayloadHash
    ) async throws(S3Error) -> HTTPClientResponse {
        let headers = signer.signedHeaders(for: request, payloadHash: payloadHash, at: AWSTimestamp(unixSeconds: now()))
        do {
            return try await client.execute(
                HTTPClientRequest(
                    method: request.method, url: request.url, headers: headers,
                    body: body, timeout: configuration.requestTimeout))
        } catch {
            throw .transport(error)
        }
    }

    private static func isBucketNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    private static func isLowercaseHexByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

import ParleyCrypto

/// AWS Signature Version 4 (docs.aws.amazon.com, "Signature Version 4 signing process" and S3's "Authenticating
/// Requests (AWS Signature Version 4)"): the `Authorization` header for a request, or a presigned URL. Pure: the
/// time is an argument, nothing is read or sent.
public struct AWSSignatureV4: Sendable {
    public static let algorithm = "AWS4-HMAC-SHA256"
    /// `x-amz-content-sha256` for a body that is not hashed (presigned URLs, or streaming without a hash).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The SHA-256 of no bytes, for requests without a body.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// The longest validity S3 accepts for a presigned URL: seven days.
    public static let maxPresignedExpiry = 604_800

    public let accessKeyID: String
    public let region: String
    public let service: String
    /// Temporary credentials' token (`x-amz-security-token`), if any.
    public let sessionToken: String?
    private let secretAccessKey: String

    public init(
        accessKeyID: String, secretAccessKey: String, region: String, service: String = "s3",
        sessionToken: String? = nil
    ) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.region = region
        self.service = service
        self.sessionToken = sessionToken
    }

    // MARK: Signing

    /// The header fields to send for `request`: its own, then `Host` (unless given), `x-amz-date`,
    /// `x-amz-content-sha256` (`payloadHash`: the body's hex SHA-256 or `unsignedPayload`),
    /// `x-amz-security-token` with temporary credentials, and `Authorization`. Every field is signed.
    public func signedHeaders(for request: AWSRequest, payloadHash: String, at time: AWSTimestamp) -> [(String, String)]
    {
        var headers = request.headers
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { headers.insert(("Host", request.host), at: 0) }
        headers.append(("x-amz-date", time.amzDate))
        headers.append(("x-amz-content-sha256", payloadHash))
        if let sessionToken { headers.append(("x-amz-security-token", sessionToken)) }

        let canonical = Self.canonicalHeaders(headers)
        let canonicalRequest = Self.canonicalRequest(
            method: request.method, path: request.path,
            query: request.query, canonicalHeaders: canonical,
            payloadHash: payloadHash)
        let signature = self.signature(canonicalRequest: canonicalRequest, at: time)
        headers.append(
            (
                "Authorization",
                "\(Self.algorithm) Credential=\(accessKeyID)/\(scope(at: time)), "
                    + "SignedHeaders=\(canonical.names), Signature=\(signature)"
            ))
        return headers
    }

    /// A URL that performs `request` (usually a GET) without further credentials until `expires` seconds after
    /// `time` (clamped to 1...604800). Only `Host` is signed; the request's other header fields are ignored.
    public func presignedURL(for request: AWSRequest, expires: Int, at time: AWSTimestamp) -> String {
        var query = request.query
        query.append(("X-Amz-Algorithm", Self.algorithm))
        query.append(("X-Amz-Credential", "\(accessKeyID)/\(scope(at: time))"))
        query.append(("X-Amz-Date", time.amzDate))
        query.append(("X-Amz-Expires", String(min(max(expires, 1), Self.maxPresignedExpiry))))
        if let sessionToken { query.append(("X-Amz-Security-Token", sessionToken)) }
        query.append(("X-Amz-SignedHeaders", "host"))

        let canonicalRequest = Self.canonicalRequest(
            method: request.method, path: request.path, query: query,
            canonicalHeaders: Self.canonicalHeaders([("host", request.host)]),
            payloadHash: Self.unsignedPayload)
        let signature = self.signature(canonicalRequest: canonicalRequest, at: time)
        return "\(request.scheme)://\(request.host)\(AWSURIEncoding.path(request.path))?"
            + AWSURIEncoding.canonicalQuery(query) + "&X-Amz-Signature=\(signature)"
    }

    // MARK: The steps, visible to the tests

    /// `<yyyyMMdd>/<region>/<service>/aws4_request`.
    func scope(at time: AWSTimestamp) -> String { "\(time.dateStamp)/\(region)/\(service)/aws4_request" }

    /// Method, URI, query, header fields, signed field names and payload hash, one per line (task 1 of the docs).
    static func canonicalRequest(
        method: String, path: String, query: [(String, String)],
        canonicalHeaders: CanonicalHeaders, payloadHash: String
    ) -> String {
        [
            method, AWSURIEncoding.path(path), AWSURIEncoding.canonicalQuery(query), canonicalHeaders.block,
            canonicalHeaders.names, payloadHash,
        ].joined(separator: "\n")
    }

    /// Algorithm, time, scope and the canonical request's hash (task 2).
    func stringToSign(canonicalRequest: String, at time: AWSTimestamp) -> String {
        [Self.algorithm, time.amzDate, scope(at: time), Hex.encode(SHA256.hash(Array(canonicalRequest.utf8)))]
            .joined(separator: "\n")
    }

    /// HMAC chain over date, region, service and "aws4_request", keyed first by "AWS4" + the secret (task 3).
    func signingKey(at time: AWSTimestamp) -> [UInt8] {
        var key = Array(("AWS4" + secretAccessKey).utf8)
        for part in [time.dateStamp, region, service, "aws4_request"] {
            key = HMAC.sha256(key: key, message: Array(part.utf8))
        }
        return key
    }

    func signature(canonicalRequest: String, at time: AWSTimestamp) -> String {
        let stringToSign = stringToSign(canonicalRequest: canonicalRequest, at: time)
        return Hex.encode(HMAC.sha256(key: signingKey(at: time), message: Array(stringToSign.utf8)))
    }

    /// Header fields in canonical form: names lowercased and sorted, values trimmed with inner runs of spaces
    /// collapsed, repeated fields joined with commas.
    struct CanonicalHeaders {
        /// `name:value\n` for each field (the block ends with a newline, so the canonical request has a blank line).
        let block: String
        /// `host;range;x-amz-date`.
        let names: String
    }

    static func canonicalHeaders(_ headers: [(String, String)]) -> CanonicalHeaders {
        var merged: [String: [String]] = [:]
        for (name, value) in headers {
            let words = value.split(separator: " ", omittingEmptySubsequences: true)
            merged[name.lowercased(), default: []].append(words.joined(separator: " "))
        }
        let names = merged.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let block = names.map { "\($0):\(merged[$0]!.joined(separator: ","))\n" }.joined()
        return CanonicalHeaders(block: block, names: names.joined(separator: ";"))
    }
}

/// What SigV4 signs of a request: method, scheme, the `Host` value (with `:port` unless the scheme's default),
/// the unencoded path and query parameters, and header fields.
public struct AWSRequest: Sendable {
    public var method: String
    public var scheme: String
    public var host: String
    /// Unencoded, starting with `/`; each segment is percent-encoded when sent and signed.
    public var path: String
    /// Unencoded names and values; sorted and percent-encoded when sent and signed.
    public var query: [(String, String)]
    public var headers: [(String, String)]

    public init(
        method: String, scheme: String = "https", host: String, path: String,
        query: [(String, String)] = [], headers: [(String, String)] = []
    ) {
        self.method = method
        self.scheme = scheme
        self.host = host
        self.path = path
        self.query = query
        self.headers = headers
    }

    /// The URL to send the (header-signed) request to, encoded exactly as it was signed.
    public var url: String {
        let query = AWSURIEncoding.canonicalQuery(query)
        return "\(scheme)://\(host)\(AWSURIEncoding.path(path))" + (query.isEmpty ? "" : "?" + query)
    }
}

/// Where and as whom `S3BlobStorage` stores blobs.
public struct S3Configuration: Sendable {
    /// `scheme://host[:port]`: `https://s3.us-east-1.amazonaws.com`, or a MinIO / moto address such as
    /// `http://127.0.0.1:9000`.
    public var endpoint: String
    public var region: String
    public var bucket: String
    public var accessKeyID: String
    public var secretAccessKey: String
    /// Temporary credentials' token, if any.
    public var sessionToken: String?
    /// `endpoint/bucket/key` (path style) rather than `bucket.endpoint/key` (virtual-hosted style).
    public var pathStyle: Bool
    /// The endpoint presigned download URLs point at, when clients reach the store by another address than the
    /// server does (a public name in front of a private MinIO). The URL is signed for this host.
    public var presignEndpoint: String?
    /// Limit for one request; a store streams the whole blob within it.
    public var requestTimeout: Duration

    /// `pathStyle` defaults to false for AWS's own endpoints (`*.amazonaws.com`), true for any other, since
    /// MinIO, moto and most S3-compatible stores are addressed by IP or a name without bucket subdomains.
    public init(
        endpoint: String, region: String, bucket: String, accessKeyID: String, secretAccessKey: String,
        sessionToken: String? = nil, pathStyle: Bool? = nil, presignEndpoint: String? = nil,
        requestTimeout: Duration = .seconds(300)
    ) {
        self.endpoint = endpoint
        self.region = region
        self.bucket = bucket
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.pathStyle = pathStyle ?? !(S3Endpoint(endpoint)?.hostName.hasSuffix(".amazonaws.com") ?? false)
        self.presignEndpoint = presignEndpoint
        self.requestTimeout = requestTimeout
    }
}

/// An endpoint split into scheme and `Host` value; the scheme's default port is dropped, because that is how
/// clients write `Host` and the signature covers it.
struct S3Endpoint: Equatable {
    let scheme: String
    /// Host with `:port` when not the scheme's default.
    let host: String
    /// Host without the port (IPv6 literals keep their brackets).
    let hostName: String

    init?(_ endpoint: String) {
        var rest = Substring(endpoint)
        guard let separator = rest.firstRange(of: "://") else { return nil }
        let scheme = rest[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        rest = rest[separator.upperBound...]
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        // No path, query, credentials or whitespace: a base path would change every signature.
        guard !rest.isEmpty, !rest.contains(where: { "/?#@ ".contains($0) }) else { return nil }
        var hostName = rest
        var port: Substring?
        if let colon = rest.lastIndex(of: ":"), !rest[colon...].contains("]") {
            hostName = rest[..<colon]
            port = rest[rest.index(after: colon)...]
            guard let number = Int(port!), (1...65535).contains(number) else { return nil }
        }
        guard !hostName.isEmpty else { return nil }
        let defaultPort = scheme == "https" ? "443" : "80"
        let name = hostName.lowercased()
        self.scheme = scheme
        self.hostName = name
        if let port, port != defaultPort {
            self.host = "\(name):\(port)"
        } else {
            self.host = name
        }
    }
}

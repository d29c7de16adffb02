/// An outgoing HTTP request. Plain data: it can be built anywhere and sent from any task.
public struct HTTPClientRequest: Sendable {
    /// Which HTTP version to speak.
    public enum HTTPVersion: Sendable, Equatable {
        /// HTTP/1.1 (S3 and most APIs).
        case http1_1
        /// HTTP/2 straight away without an upgrade (RFC 9113 section 3.3), for `http://` peers known to speak it.
        /// With libcurl before 8.0 each request gets its own connection (see `HTTPClient.multiplexesPriorKnowledge`).
        case http2PriorKnowledge
        /// HTTP/2 negotiated by ALPN over TLS, HTTP/1.1 when the peer does not offer it or for `http://` (APNs).
        ///
        /// With libcurl 7.88 (Debian 12), a multiplexed response whose body spans several DATA frames sometimes
        /// stalls on its last frame until the timeout (about 1 in 6 runs of 30 concurrent 100 kB downloads here;
        /// none with bodies that fit one frame, such as APNs answers). libcurl 8 rewrote that code.
        case http2TLS
    }

    /// The method token, e.g. `GET`, `PUT`, `HEAD`.
    public var method: String
    /// An absolute `http://` or `https://` URL, already percent-encoded.
    public var url: String
    /// Header fields sent as given, in order. A field named like one libcurl adds itself (`Host`, `Content-Length`,
    /// `Expect`) replaces curl's; an empty value sends the field empty.
    public var headers: [(String, String)]
    public var body: HTTPClientBody
    /// Limit for the whole exchange, connecting included.
    public var timeout: Duration
    public var httpVersion: HTTPVersion
    /// Decides, for every new connection, whether its address may be connected to (nil: any). A refused address
    /// fails the request with `.connectFailed` unless another address of the name is allowed. Reused connections
    /// were checked when they were made: give requests with a policy a client of their own.
    public var connectPolicy: (@Sendable (ConnectAddress) -> Bool)?
    /// The TLS client certificate this request presents (APNs certificate-based authentication), instead of the
    /// client's `HTTPClientTLS` one. libcurl reuses a connection only for requests presenting the same certificate.
    public var clientCertificate: HTTPClientCertificate?

    public init(
        method: String = "GET", url: String, headers: [(String, String)] = [], body: HTTPClientBody = .none,
        timeout: Duration = .seconds(30), httpVersion: HTTPVersion = .http1_1,
        connectPolicy: (@Sendable (ConnectAddress) -> Bool)? = nil, clientCertificate: HTTPClientCertificate? = nil
    ) {
        self.connectPolicy = connectPolicy
        self.clientCertificate = clientCertificate
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.httpVersion = httpVersion
    }
}

/// What a request sends after its header.
public enum HTTPClientBody: Sendable, Equatable {
    /// No body. `PUT`, `POST` and `PATCH` still send `Content-Length: 0`.
    case none
    case bytes([UInt8])
    /// `length` bytes of the file at `path` from `offset`, read while sending (never loaded whole into memory).
    case file(path: String, offset: Int64, length: Int64)

    /// Bytes the body sends.
    public var length: Int64 {
        switch self {
        case .none: 0
        case .bytes(let bytes): Int64(bytes.count)
        case .file(_, _, let length): length
        }
    }
}

/// A TLS client certificate held in memory, as PEM (never written to a file).
public struct HTTPClientCertificate: Sendable, Equatable {
    /// The certificate, then the CA certificates of its chain.
    public var certificatePEM: [UInt8]
    /// Its private key, unencrypted.
    public var privateKeyPEM: [UInt8]

    public init(certificatePEM: [UInt8], privateKeyPEM: [UInt8]) {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }
}

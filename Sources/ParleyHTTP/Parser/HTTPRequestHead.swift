/// How the body of a request is delimited (RFC 9112 §6.3).
public enum HTTPBodyFraming: Sendable, Hashable {
    /// Neither Content-Length nor Transfer-Encoding: the request has no body.
    case none
    case contentLength(Int)
    case chunked
}

/// A parsed request line and header section, with the facts the connection driver needs precomputed.
public struct HTTPRequestHead: Sendable, Equatable {
    public var method: HTTPMethod
    /// The raw request-target as received.
    public var target: String
    /// The target up to `?` for origin-form; the path of an absolute-form target (`/` if empty);
    /// `*` for asterisk-form. Not percent-decoded.
    public var path: String
    /// Everything after the first `?`, raw (not decoded); nil if the target has no `?`.
    public var query: String?
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    /// HTTP/1.1: true unless `Connection: close`; HTTP/1.0: false unless `Connection: keep-alive`
    /// (RFC 9112 §9.3).
    public var keepAlive: Bool
    /// `Expect: 100-continue` on an HTTP/1.1 request (RFC 9110 §10.1.1).
    public var expectContinue: Bool
    public var framing: HTTPBodyFraming
    /// The Connection header lists `upgrade` and an Upgrade header is present (RFC 9110 §7.8).
    public var isUpgrade: Bool

    public init(
        method: HTTPMethod,
        target: String,
        path: String,
        query: String? = nil,
        version: HTTPVersion = .http1_1,
        headers: HTTPHeaders = HTTPHeaders(),
        keepAlive: Bool = true,
        expectContinue: Bool = false,
        framing: HTTPBodyFraming = .none,
        isUpgrade: Bool = false
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.keepAlive = keepAlive
        self.expectContinue = expectContinue
        self.framing = framing
        self.isUpgrade = isUpgrade
    }
}

/// What ``HTTPRequestParser/next()`` produces: for every request one `.head`, zero or more `.body`, one `.end`.
public enum HTTPParserEvent: Sendable, Equatable {
    case head(HTTPRequestHead)
    /// A non-empty run of body bytes; for chunked bodies the de-chunked data.
    case body([UInt8])
    /// The request is complete (emitted for every request, also without a body).
    case end
}

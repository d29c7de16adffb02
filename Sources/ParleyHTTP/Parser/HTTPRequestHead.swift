/// How the body of a request is delimited (RFC 9112 §6.3).
public enum HTTPBodyFraming: Sendable, Hashable {
    /// Neither Content-Length nor Transfer-Encoding: the request has no body.
    case none
    case contentLength(Int)
    case chunked

    /// Whether body bytes follow the head.
    public var hasBody: Bool {
        switch self {
        case .none: false
        case .contentLength(let length): length > 0
        case .chunked: true
        }
    }
}

/// A parsed request line and header section, with the facts the connection driver needs precomputed.
public struct HTTPRequestHead: Sendable, Equatable {
    public var method: HTTPMethod
    /// The raw request-target as received.
    public var target: String {
        get { rawTarget ?? (query.map { path + "?" + $0 } ?? path) }
        set { rawTarget = Self.rawTarget(newValue, path: path, query: query) }
    }
    /// The target when it is not `path` + `?query` (absolute-form, asterisk-form): the usual origin-form target is
    /// not kept twice (it is rarely read, and a long one would cost a string per request).
    private var rawTarget: String?
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
        self.init(
            method: method, rawTarget: Self.rawTarget(target, path: path, query: query), path: path, query: query,
            version: version, headers: headers, keepAlive: keepAlive, expectContinue: expectContinue,
            framing: framing, isUpgrade: isUpgrade)
    }

    /// The parser's form: `target` only when it differs from `path` + `?query`.
    init(
        method: HTTPMethod, rawTarget: String?, path: String, query: String?, version: HTTPVersion,
        headers: HTTPHeaders, keepAlive: Bool, expectContinue: Bool, framing: HTTPBodyFraming, isUpgrade: Bool
    ) {
        self.method = method
        self.rawTarget = rawTarget
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.keepAlive = keepAlive
        self.expectContinue = expectContinue
        self.framing = framing
        self.isUpgrade = isUpgrade
    }

    private static func rawTarget(_ target: String, path: String, query: String?) -> String? {
        let joined = query.map { path + "?" + $0 } ?? path
        return target == joined ? nil : target
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

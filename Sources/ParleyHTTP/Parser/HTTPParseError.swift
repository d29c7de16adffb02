/// Why a request could not be parsed, with the status the server should answer (then close the connection).
public struct HTTPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 400, 413, 431, 501 or 505.
    public var status: Int
    /// Short human-readable reason, stable for a given input (safe to log, not meant for clients to parse).
    public var reason: String

    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { "\(status) \(reason)" }

    /// 431: the request line and header fields (or the trailer section) exceed the header limit.
    public static let headersTooLarge = HTTPParseError(status: 431, reason: "request header fields too large")
    /// 413: the body exceeds the body limit in force for the request.
    public static let bodyTooLarge = HTTPParseError(status: 413, reason: "request body too large")
    /// 501: a well-formed method that Parley does not implement (RFC 9110 §9.1).
    public static let methodNotImplemented = HTTPParseError(status: 501, reason: "method not implemented")
    /// 501: a transfer coding other than `chunked` (RFC 9112 §6.1).
    public static let transferCodingNotImplemented = HTTPParseError(
        status: 501, reason: "transfer coding not implemented")
    /// 505: a well-formed HTTP version other than 1.0 and 1.1 (RFC 9110 §15.6.6).
    public static let versionNotSupported = HTTPParseError(status: 505, reason: "HTTP version not supported")

    /// 400 with the given reason.
    public static func malformed(_ reason: String) -> HTTPParseError {
        HTTPParseError(status: 400, reason: reason)
    }
}

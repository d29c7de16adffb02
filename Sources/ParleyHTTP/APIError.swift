/// The one error type of Parley's API. Every failure a client can see is an `APIError`, turned into
/// the envelope `{"code": <int>, "message": "<text>", "data": null}` with `status` exactly once, by
/// `APIError.mapping` (ErrorMapping.swift). Codes are stable and documented in openapi.yaml and docs/ARCHITECTURE.md.
///
/// Code ranges: 1000-1029 request and protocol, 1030-1069 auth and tenancy, 1100-1199 messaging,
/// 1200-1299 realtime, 1300-1399 files, 1400-1499 updates and push, 1500-1599 server.
public struct APIError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    public var status: Int
    public var message: String
    /// Extra response headers, e.g. `Retry-After` or `Allow`.
    public var headers: [String: String]
    /// The envelope's `data`: a JSON document, written as given (nil writes `null`). For the few errors that carry
    /// details a client acts on (the code an app's backend gave when it refused a message).
    public var data: [UInt8]?

    public init(code: Int, status: Int, message: String, headers: [String: String] = [:], data: [UInt8]? = nil) {
        self.code = code
        self.status = status
        self.message = message
        self.headers = headers
        self.data = data
    }

    public var description: String { "APIError(\(code), \(status)): \(message)" }

    /// Same code and status, a more specific message.
    public func with(message: String) -> APIError {
        var copy = self
        copy.message = message
        return copy
    }

    // MARK: Request and protocol (1000-1029)
    public static let badRequest = APIError(code: 1000, status: 400, message: "bad request")
    public static let invalidJSON = APIError(code: 1001, status: 400, message: "request body is not valid JSON")
    public static let validationFailed = APIError(code: 1002, status: 400, message: "validation failed")
    public static let notFound = APIError(code: 1004, status: 404, message: "not found")
    public static func methodNotAllowed(allowed: [String]) -> APIError {
        APIError(
            code: 1005, status: 405, message: "method not allowed", headers: ["Allow": allowed.joined(separator: ", ")])
    }
    public static let payloadTooLarge = APIError(code: 1006, status: 413, message: "request body too large")
    public static let headersTooLarge = APIError(code: 1007, status: 431, message: "request header fields too large")
    public static let unknownMethod = APIError(code: 1008, status: 501, message: "method not implemented")
    public static let unsupportedMediaType = APIError(code: 1009, status: 415, message: "unsupported media type")
    public static let requestTimeout = APIError(code: 1011, status: 408, message: "request timeout")
    public static let versionNotSupported = APIError(code: 1012, status: 505, message: "HTTP version not supported")
    /// Too many request bodies are being received at once (the server's budget for buffered bodies is spent).
    public static let tooManyBodies = APIError(
        code: 1015, status: 503, message: "the server is receiving too many request bodies, retry shortly",
        headers: ["Retry-After": "1"])
    public static func rateLimited(retryAfterSeconds: Int) -> APIError {
        APIError(
            code: 1010, status: 429, message: "too many requests", headers: ["Retry-After": String(retryAfterSeconds)])
    }

    // MARK: Server (1500-1599)
    public static let internalError = APIError(code: 1500, status: 500, message: "internal server error")
    public static let serviceUnavailable = APIError(code: 1503, status: 503, message: "service temporarily unavailable")
    public static let databaseUnavailable = APIError(
        code: 1504, status: 503, message: "database unavailable, retry shortly")

    /// The error for a parser failure's HTTP status.
    public static func forParseStatus(_ status: Int, reason: String) -> APIError {
        switch status {
        case 413: return .payloadTooLarge
        case 431: return .headersTooLarge
        case 501: return .unknownMethod
        case 505: return .versionNotSupported
        case 408: return .requestTimeout
        default: return APIError.badRequest.with(message: "bad request: \(reason)")
        }
    }
}

/// Lets lower layers' errors (e.g. the database's) map themselves to an `APIError` without the HTTP
/// layer knowing them. Conformances live in the composition root.
public protocol APIErrorConvertible: Error {
    var apiError: APIError { get }
}

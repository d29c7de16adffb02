import ParleyNet
import ParleyObservability

/// Per-request values handlers need besides the request: the request id, a logger carrying it, the
/// route's path parameters, and typed values that middleware adds (the authenticated principal, ...).
public struct RequestContext: Sendable {
    public var requestID: String
    /// The server's logger; `logger` adds the request id only when a line is actually written.
    public var baseLogger: Logger
    public var logger: Logger {
        get { requestID.isEmpty ? baseLogger : baseLogger.with("request_id", .string(requestID)) }
        set { baseLogger = newValue }
    }
    public var parameters: PathParameters
    /// The matched route's pattern, e.g. `/api/users/{id}` (used for metrics and logs).
    public var routePattern: String
    /// The matched route's `Route.id`; -1 when no route matched (404, 405).
    public var routeID = -1
    public var remoteAddress: String
    /// When the request's bytes were read (the access log's clock; the connection sets it).
    public var startedAt: Instant
    private var values: [ObjectIdentifier: any Sendable] = [:]

    public init(
        requestID: String, logger: Logger, parameters: PathParameters = [:], routePattern: String = "",
        remoteAddress: String = "", startedAt: Instant = .now()
    ) {
        self.startedAt = startedAt
        self.requestID = requestID
        self.baseLogger = logger
        self.parameters = parameters
        self.routePattern = routePattern
        self.remoteAddress = remoteAddress
    }

    /// A typed slot middleware fills in, keyed by a type: `context[AuthKey.self] = principal`.
    public subscript<K: RequestContextKey>(_ key: K.Type) -> K.Value? {
        get { values[ObjectIdentifier(key)] as? K.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }

    /// A path parameter, or 400 when it is missing (a route/handler mismatch).
    public func parameter(_ name: String) throws(APIError) -> String {
        guard let value = parameters[name] else {
            throw APIError.badRequest.with(message: "missing path parameter `\(name)`")
        }
        return value
    }
}

public protocol RequestContextKey {
    associatedtype Value: Sendable
}

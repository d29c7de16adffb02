/// A server's bytes that break the NATS client protocol: the connection cannot be trusted any further and is
/// closed (and, unless the client was stopped, replaced).
public enum NATSProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A control line (everything up to CRLF) over the parser's limit.
    case controlLineTooLong(limit: Int)
    /// An operation this client does not know (the first bytes of the line, printable ASCII only).
    case unknownOperation(String)
    /// A known operation whose arguments are wrong.
    case malformed(operation: String, reason: String)
    /// A MSG or HMSG larger than the server's own `max_payload` (or the client's ceiling).
    case payloadTooLarge(size: Int, limit: Int)
    /// The bytes after a payload were not CRLF.
    case missingPayloadTerminator
    /// INFO's JSON could not be read.
    case invalidInfo(String)
    /// An HMSG header block that is not `NATS/1.0[ status[ description]]` followed by `Name: value` lines.
    case malformedHeaders(String)

    public var description: String {
        switch self {
        case .controlLineTooLong(let limit): "control line longer than \(limit) bytes"
        case .unknownOperation(let operation): "unknown operation \(operation)"
        case .malformed(let operation, let reason): "malformed \(operation): \(reason)"
        case .payloadTooLarge(let size, let limit): "payload of \(size) bytes over the limit of \(limit)"
        case .missingPayloadTerminator: "payload not followed by CRLF"
        case .invalidInfo(let reason): "unreadable INFO: \(reason)"
        case .malformedHeaders(let reason): "malformed message headers: \(reason)"
        }
    }
}

/// A `-ERR` from the server, classified by its text (which the server sends in single quotes).
public struct NATSServerError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// Wrong or missing credentials (`Authorization Violation`, `User Authentication Expired`, ...).
        case authorizationViolation
        /// CONNECT did not come in time (`Authorization Timeout`).
        case authorizationTimeout
        /// The server saw our side as dead (`Stale Connection`).
        case staleConnection
        /// A message over `max_payload` (`Maximum Payload Violation`); the client checks before sending.
        case maxPayloadViolation
        case maxConnectionsExceeded
        case slowConsumer
        /// `Permissions Violation for Publish to ...` / `... Subscription to ...`: the connection stays.
        case permissionsViolation
        /// `Invalid Subject` / `Invalid Publish Subject`: the connection stays.
        case invalidSubject
        /// `Maximum Subscriptions Exceeded`: that SUB is ignored, the connection stays.
        case maxSubscriptionsExceeded
        /// `Secure Connection - TLS Required`: this client speaks plain TCP only.
        case tlsRequired
        /// Anything else (`Unknown Protocol Operation`, `Parser Error`, ...): the server closes after these.
        case other
    }

    /// The text without its quotes.
    public var message: String
    public var kind: Kind

    public init(message: String) {
        self.message = message
        kind = Self.classify(message.lowercased())
    }

    /// The server closes the connection after every error but the few that concern one operation.
    public var closesConnection: Bool {
        switch kind {
        case .permissionsViolation, .invalidSubject, .maxSubscriptionsExceeded: false
        default: true
        }
    }

    public var description: String { "server error '\(message)'" }

    private static func classify(_ text: String) -> Kind {
        if text.hasPrefix("permissions violation") { return .permissionsViolation }
        if text.hasPrefix("invalid subject") || text.hasPrefix("invalid publish subject") { return .invalidSubject }
        if text.hasPrefix("maximum subscriptions exceeded") { return .maxSubscriptionsExceeded }
        if text == "authorization timeout" || text == "authentication timeout" { return .authorizationTimeout }
        if text.hasPrefix("authorization violation") || text.hasPrefix("authentication")
            || (text.hasPrefix("user authentication") || text.hasPrefix("account authentication"))
        {
            return .authorizationViolation
        }
        if text == "stale connection" { return .staleConnection }
        if text.hasPrefix("maximum payload") { return .maxPayloadViolation }
        if text.hasPrefix("maximum connections exceeded") || text.hasPrefix("maximum account active connections") {
            return .maxConnectionsExceeded
        }
        if text.hasPrefix("slow consumer") { return .slowConsumer }
        if text.hasPrefix("secure connection") { return .tlsRequired }
        return .other
    }
}

/// Why a client operation failed or a connection ended.
public enum NATSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A subject or reply subject that the protocol does not allow (the reason says which rule).
    case invalidSubject(String)
    case invalidQueueGroup(String)
    /// A publish over the server's `max_payload`, refused before anything was sent.
    case payloadTooLarge(size: Int, limit: Int)
    /// The client was closed (or is draining): nothing more is sent.
    case closed
    /// Resolving the host, or the TCP connection, failed (the text is the system's).
    case connectFailed(String)
    /// TCP, INFO and the PONG confirming CONNECT did not all come within `connectTimeout`.
    case connectTimedOut
    /// The server closed the connection, or reading or writing it failed.
    case connectionLost(String)
    /// `maxOutstandingPings` PINGs in a row went unanswered.
    case staleConnection
    /// The server does not accept plain TCP.
    case tlsRequired
    case protocolError(NATSProtocolError)
    case server(NATSServerError)
    /// `close()` did not see the server confirm the drain within `drainTimeout`.
    case drainTimedOut

    public var description: String {
        switch self {
        case .invalidSubject(let reason): "invalid subject: \(reason)"
        case .invalidQueueGroup(let reason): "invalid queue group: \(reason)"
        case .payloadTooLarge(let size, let limit): "payload of \(size) bytes over the server's max_payload \(limit)"
        case .closed: "the NATS client is closed"
        case .connectFailed(let reason): "could not connect: \(reason)"
        case .connectTimedOut: "could not connect: timed out"
        case .connectionLost(let reason): "connection lost: \(reason)"
        case .staleConnection: "stale connection: PINGs unanswered"
        case .tlsRequired: "the server requires TLS, which this client does not speak"
        case .protocolError(let error): "protocol error: \(error)"
        case .server(let error): error.description
        case .drainTimedOut: "the drain was not confirmed in time"
        }
    }
}

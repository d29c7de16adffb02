/// A close status code (RFC 6455 §7.4). Parley's own codes live in 4000-4999, split like centrifuge's:
///
/// | range     | meaning for the client                                  |
/// |-----------|---------------------------------------------------------|
/// | 4000-4499 | transient: reconnect (with back-off) and `sync`          |
/// | 4500-4999 | terminal: do not reconnect without user action (log in)  |
///
/// Defined so far (see docs/websocket.md): 4000 slow consumer, 4001 heartbeat timeout.
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    // MARK: RFC 6455 §7.4.1 and the IANA registry

    public static let normalClosure = WebSocketCloseCode(1000)
    /// The server is going down (graceful shutdown) or a browser navigated away.
    public static let goingAway = WebSocketCloseCode(1001)
    public static let protocolError = WebSocketCloseCode(1002)
    public static let unsupportedData = WebSocketCloseCode(1003)
    /// Never sent: stands for "the Close frame carried no code" (§7.1.5).
    public static let noStatusReceived = WebSocketCloseCode(1005)
    /// Never sent: stands for "the connection ended without a Close frame" (§7.1.5).
    public static let abnormalClosure = WebSocketCloseCode(1006)
    /// A text message (or close reason) that is not valid UTF-8.
    public static let invalidPayload = WebSocketCloseCode(1007)
    public static let policyViolation = WebSocketCloseCode(1008)
    /// A frame or message over the configured size limit.
    public static let messageTooBig = WebSocketCloseCode(1009)
    public static let mandatoryExtension = WebSocketCloseCode(1010)
    public static let internalError = WebSocketCloseCode(1011)
    public static let serviceRestart = WebSocketCloseCode(1012)
    public static let tryAgainLater = WebSocketCloseCode(1013)
    public static let badGateway = WebSocketCloseCode(1014)

    // MARK: Parley (4000-4999)

    /// The peer did not read fast enough: its outgoing queue overflowed. Reconnect and `sync`.
    public static let slowConsumer = WebSocketCloseCode(4000)
    /// The peer answered none of the last heartbeat pings. Reconnect.
    public static let heartbeatTimeout = WebSocketCloseCode(4001)

    /// Whether the code may appear in a Close frame on the wire (§7.4.1, §7.4.2): 1000-1003, 1007-1014
    /// and 3000-4999. 1004 is reserved, 1005/1006/1015 are never sent, 1016-2999 are unassigned.
    public var isSendable: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// For Parley's own codes: may the client reconnect on its own?
    public var allowsReconnect: Bool { !(4500...4999).contains(rawValue) }

    public var description: String { String(rawValue) }
}

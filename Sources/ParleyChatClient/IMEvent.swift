import ParleyJSON

/// What an `IMConnection` hands to its owner, in the order the server sent it.
public enum IMEvent: Sendable {
    /// A server event (no `reqId`): `message`, `revoke`, `edit`, `read`, `typing`, `conversation`,
    /// `account_conflict`, `session_ended`, `token_expired` (docs/protocol.md, "Server → client events").
    case event(type: String, data: JSONValue)
    /// The connection ended; always the stream's last element.
    case closed(IMCloseReason)
}

/// How a connection ended, and whether to reconnect (docs/protocol.md, "Close codes").
public enum IMCloseReason: Sendable, Equatable, CustomStringConvertible {
    /// The server's Close frame (nil: it carried no code).
    case server(code: UInt16?, reason: String)
    /// The TCP connection failed or ended without a Close.
    case lost(String)
    /// We closed it (`IMConnection.close()`).
    case byClient

    /// 4500-4999 mean "do not reconnect without the user" (account conflict, session ended); everything else that
    /// we did not ask for means "reconnect with back-off, then sync".
    public var shouldReconnect: Bool {
        switch self {
        case .server(let code, _): !(4500...4999).contains(code ?? 1000)
        case .lost: true
        case .byClient: false
        }
    }

    public var description: String {
        switch self {
        case .server(let code, let reason):
            "closed by the server with \(code.map(String.init) ?? "no code")" + (reason.isEmpty ? "" : " (\(reason))")
        case .lost(let why): "connection lost: \(why)"
        case .byClient: "closed"
        }
    }
}

/// Why `IMConnection.open` failed.
public enum IMConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection (refused, unresolvable, timed out).
    case unreachable(String)
    /// The upgrade was refused with an error envelope before anything was upgraded: 1030 bad token, 1031 expired
    /// (renew and reconnect), 1032 wrong audience, 1034 session ended, 1033 consent required.
    case rejected(status: Int, code: Int, message: String)
    /// The server did not speak the protocol (no `hello` first).
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .unreachable(let why): why
        case .rejected(let status, let code, let message):
            "WebSocket refused: \(message) (code \(code), HTTP \(status))"
        case .protocolViolation(let why): "WebSocket protocol: \(why)"
        }
    }
}

/// The `hello` frame that opens every connection.
public struct IMHello: Sendable, Equatable {
    public var userId: String
    public var sessionId: String
    /// The server pings this often; our client answers pings by itself.
    public var heartbeatSeconds: Int
    public var tokenExpiresAt: String

    public init(json: JSONValue) throws(IMConnectionError) {
        guard let userId = json["userId"]?.stringValue, let sessionId = json["sessionId"]?.stringValue else {
            throw .protocolViolation("hello without userId/sessionId: \(json)")
        }
        self.userId = userId
        self.sessionId = sessionId
        heartbeatSeconds = Int(json["heartbeatSeconds"]?.int64Value ?? 30)
        tokenExpiresAt = json["tokenExpiresAt"]?.stringValue ?? ""
    }
}

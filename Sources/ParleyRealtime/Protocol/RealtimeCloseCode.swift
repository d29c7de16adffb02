import ParleyWebSocket

/// The gateway's close codes (docs/protocol.md). 4000-4499: reconnect and sync; 4500-4999: do not reconnect
/// without the user (log in again).
extension WebSocketCloseCode {
    /// The IM token expired: refresh it (`POST /api/im/auth/token`) and reconnect.
    public static let tokenExpired = WebSocketCloseCode(4002)
    /// The server lost its cluster feed and may have missed events for this connection: reconnect and sync.
    public static let resyncRequired = WebSocketCloseCode(4003)
    /// The client sent more requests than `PARLEY_WS_PENDING_BYTES` hold without waiting for their answers:
    /// reconnect with back-off, sync, and keep fewer requests in flight.
    public static let tooManyPendingRequests = WebSocketCloseCode(4004)
    /// Another login on the same platform displaced this session (`account_conflict` was sent first).
    public static let accountConflict = WebSocketCloseCode(4500)
    /// The session ended: logout, revoked, or refresh-token reuse (`session_ended` was sent first).
    public static let sessionEnded = WebSocketCloseCode(4501)
    /// The session opened more sockets than `PARLEY_WS_MAX_SOCKETS_PER_SESSION`: this one, its oldest, is closed.
    /// The client does not reconnect it (its newer socket carries on; reconnecting would close that one in turn).
    public static let replacedByNewerConnection = WebSocketCloseCode(4502)
}

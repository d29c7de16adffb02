/// What a `NATSClient` tells its owner, on the client's loop.
public enum NATSClientEvent: Sendable, Hashable {
    /// The first connection is confirmed (the server answered the PING after CONNECT).
    case connected(server: String)
    /// An attempt to connect to `server` failed (refused, timed out, credentials refused, ...); the client tries
    /// again after its backoff.
    case attemptFailed(server: String, NATSError)
    /// A confirmed connection ended; the client is reconnecting.
    case disconnected(NATSError)
    /// A connection is confirmed again after a loss: the subscriptions are back and the pending publishes sent.
    /// `possiblyLostMessages` is false only when nothing can have gone missing: no subscription existed during
    /// the outage (core NATS keeps nothing for absent subscribers), every publish before the loss had been
    /// confirmed by a PONG, and none was dropped meanwhile. The relay's answer to true is a sync.
    case reconnected(server: String, possiblyLostMessages: Bool)
    /// A publish was dropped: the first of a run (the counter has them all), so a full buffer is one event, not
    /// one per message.
    case lost(NATSDropReason)
    /// A `-ERR` after which the connection stays (a permissions violation, an invalid subject).
    case serverError(NATSServerError)
    /// The client stopped for good: after `close()` (nil once the drain is confirmed), or after an error it does
    /// not retry past (every server refused the credentials twice in a row).
    case closed(NATSError?)
}

/// Why a publish was not sent.
public enum NATSDropReason: Sendable, Hashable {
    /// The unsent output is over the write high-water mark.
    case backpressure
    /// Disconnected, and the pending buffer is full.
    case pendingBufferFull
    /// The pending buffer held a message larger than the new server's `max_payload`.
    case pendingOverServerLimit
    /// The client was closed while publishes were still pending.
    case closedWhilePending
}

/// What became of one publish.
public enum NATSPublishResult: Sendable, Hashable {
    /// In the write buffer (or already on the wire).
    case sent
    /// Disconnected: held in the pending buffer, sent once a connection is confirmed.
    case pending
    /// Dropped, counted, and reported through `.lost` (at the first of a run).
    case dropped(NATSDropReason)
    /// Refused before anything: an invalid subject, a payload over `max_payload`, a closed client.
    case rejected(NATSError)
}

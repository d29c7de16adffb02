import ParleyNet

/// The life of a NATS client connection, as a pure state machine (STYLE.md §2): methods are named after events,
/// return the actions the driver runs, and take the time as `now`, so handshakes, pings, backoff and drains are
/// testable without a socket or a wait.
///
/// - Connecting: the driver opens TCP to `servers[i]`; the server's INFO is answered with CONNECT, a SUB for
///   every live subscription (resubscribe) and a PING; its PONG confirms the connection, and only then are the
///   publishes held while disconnected sent (an authorization failure would have lost them).
/// - Connected: a server PING gets a PONG; a PING goes out every `pingInterval`, and the connection is stale
///   once `maxOutstandingPings` are unanswered.
/// - `-ERR`: permissions violations and invalid subjects are reported and the connection stays; the server
///   closes after every other error, so the client closes too and reconnects. Authorization refused twice in a
///   row by every server ends the client: retrying does not fix credentials.
/// - Lost (or never made): reconnect to the next server in the list (round robin) after a backoff that doubles
///   from `reconnectBackoffMin` to `reconnectBackoffMax` with every failed attempt, plus up to half of jitter;
///   forever, until `close`.
/// - Publishes: written while connected unless the unsent output is at the high-water mark; held in a bounded
///   pending buffer otherwise, and dropped (counted, reported as `.lost`) beyond it.
/// - `close`: UNSUB everything, PING, and close at the PONG (messages already on their way are still delivered)
///   or at the drain deadline.
public struct NATSConnectionStateMachine: Sendable {
    public enum Action: Sendable, Hashable {
        /// Resolve `configuration.servers[server]` and open TCP to it.
        case connect(server: Int)
        /// Write these bytes, after whatever is already queued.
        case send([UInt8])
        /// Close the socket (unsent output is discarded).
        case closeSocket
        case report(NATSClientEvent)
        /// The PING of `flushRequested(token)` was answered (everything written before it reached the server), or
        /// the connection ended first.
        case completeFlush(token: UInt64, confirmed: Bool)
    }

    /// What to do with one publish.
    public enum PublishDecision: Sendable, Hashable {
        /// Encode it into the write buffer.
        case write
        /// Encode it into the pending buffer (`appendPending`).
        case pend
        /// Drop it; when `reportLost`, tell the owner (`.lost`).
        case drop(NATSDropReason, reportLost: Bool)
        case reject(NATSError)
    }

    enum State: Sendable, Hashable {
        case idle
        /// DNS and TCP under way, or waiting for INFO.
        case connecting(server: Int, deadline: Instant)
        /// CONNECT, the SUBs and a PING are out; waiting for the PONG.
        case handshaking(server: Int, deadline: Instant)
        case connected(server: Int, nextPing: Instant)
        /// `close()` sent the UNSUBs and a PING; waiting for the PONG.
        case draining(deadline: Instant)
        case waitingToReconnect(server: Int, at: Instant)
        case closed
    }

    struct PingMark: Sendable, Hashable {
        /// `writtenPublishes` when the PING went out: its PONG confirms them.
        var writtenPublishes: UInt64
        /// The `flushRequested` token waiting for it, if any.
        var flush: UInt64?
        /// The drain's PING: its PONG (not an earlier one) ends the drain.
        var endsDrain = false
    }

    struct Subscription: Sendable, Hashable {
        var subject: String
        var queue: String?
        /// Messages delivered in all.
        var delivered = 0
        /// `delivered` when the current connection's SUB went out: the server counts `max` from there.
        var deliveredAtSubscribe = 0
        /// Remove after this many messages in all (UNSUB with a maximum).
        var max: Int?
    }

    public let configuration: NATSConfiguration
    private(set) var state = State.idle
    /// The latest INFO (kept across connections: its `max_payload` bounds publishes held while disconnected).
    public private(set) var serverInfo: NATSServerInfo?
    private(set) var subscriptions: [UInt64: Subscription] = [:]
    private var hasConnectedBefore = false
    /// Connection attempts failed since the last confirmed connection: the exponent of the next backoff.
    private(set) var failedAttempts = 0
    private var consecutiveAuthorizationFailures = 0
    private var outstandingPings = 0
    private var random: BackoffJitterGenerator

    /// Publishes encoded while disconnected, sent once a connection is confirmed.
    private(set) var pending: [UInt8] = []
    private(set) var pendingCount = 0
    private var largestPendingPayload = 0

    /// Publishes written on connections so far; a PONG confirms every one written before its PING.
    private var writtenPublishes: UInt64 = 0
    private var confirmedPublishes: UInt64 = 0
    /// Each PING still unanswered, oldest first (the server answers in order).
    private var pingMarks: [PingMark] = []
    /// Since the last confirmed connection ended: could anything have been lost?
    private var outageMayHaveLostMessages = false
    /// Inside a run of dropped publishes (only the first is reported).
    private var dropping = false
    /// Publishes dropped in all.
    public private(set) var droppedPublishes = 0

    /// `seed` drives the backoff's jitter (fixed in tests, random in the driver).
    public init(configuration: NATSConfiguration, seed: UInt64) {
        self.configuration = configuration
        random = BackoffJitterGenerator(seed: seed)
    }

    // MARK: Queries

    /// When `timerFired` next has something to do.
    public var nextDeadline: Instant? {
        switch state {
        case .connecting(_, let deadline), .handshaking(_, let deadline), .draining(let deadline): deadline
        case .connected(_, let nextPing): nextPing
        case .waitingToReconnect(_, let at): at
        case .idle, .closed: nil
        }
    }

    public var isConnected: Bool {
        if case .connected = state { return true }
        return false
    }

    public var isClosed: Bool { state == .closed }

    /// The server of the current connection or attempt.
    public var currentServer: Int? {
        switch state {
        case .connecting(let server, _), .handshaking(let server, _), .connected(let server, _),
            .waitingToReconnect(let server, _):
            server
        case .idle, .draining, .closed: nil
        }
    }

    /// A socket is open and past CONNECT, so operations may be written to it.
    private var canWriteOperations: Bool {
        switch state {
        case .handshaking, .connected, .draining: true
        default: false
        }
    }

    // MARK: Connecting

    public mutating func started(now: Instant) -> [Action] {
        guard state == .idle else { return [] }
        guard !configuration.servers.isEmpty else {
            state = .closed
            return [.report(.closed(.connectFailed("no server configured")))]
        }
        state = .connecting(server: 0, deadline: now + configuration.connectTimeout)
        return [.connect(server: 0)]
    }

    /// DNS or TCP failed before the server said anything.
    public mutating func connectFailed(_ error: NATSError, now: Instant) -> [Action] {
        guard case .connecting = state else { return [] }
        return connectionEnded(error, now: now)
    }

    public mutating func infoReceived(_ info: NATSServerInfo, now: Instant) -> [Action] {
        serverInfo = info
        guard case .connecting(let server, let deadline) = state else { return [] } // a later INFO: kept
        if info.tlsRequired == true { return connectionEnded(.tlsRequired, now: now) }
        var bytes: [UInt8] = []
        NATSEncoder.connect(
            NATSConnectOptions(configuration: configuration, server: configuration.servers[server]), into: &bytes)
        for sid in subscriptions.keys.sorted() {
            subscriptions[sid]!.deliveredAtSubscribe = subscriptions[sid]!.delivered
            let subscription = subscriptions[sid]!
            NATSEncoder.subscribe(
                subject: subscription.subject, queue: subscription.queue, sid: NATSSubscriptionID(sid), into: &bytes)
            if let max = subscription.max {
                NATSEncoder.unsubscribe(sid: NATSSubscriptionID(sid), max: max - subscription.delivered, into: &bytes)
            }
        }
        NATSEncoder.ping(into: &bytes)
        pingMarks = [PingMark(writtenPublishes: writtenPublishes)]
        state = .handshaking(server: server, deadline: deadline)
        return [.send(bytes)]
    }

    public mutating func pongReceived(now: Instant) -> [Action] {
        var flushed: [Action] = []
        var endsDrain = false
        if !pingMarks.isEmpty {
            let mark = pingMarks.removeFirst()
            confirmedPublishes = max(confirmedPublishes, mark.writtenPublishes)
            if let token = mark.flush { flushed.append(.completeFlush(token: token, confirmed: true)) }
            endsDrain = mark.endsDrain
        }
        return flushed + pongActions(endsDrain: endsDrain, now: now)
    }

    private mutating func pongActions(endsDrain: Bool, now: Instant) -> [Action] {
        switch state {
        case .handshaking(let server, _):
            state = .connected(server: server, nextPing: now + configuration.pingInterval)
            outstandingPings = 0
            failedAttempts = 0
            consecutiveAuthorizationFailures = 0
            dropping = false
            var actions: [Action] = []
            if pendingCount > 0 {
                if let limit = serverInfo?.maxPayload, limit > 0, largestPendingPayload > limit {
                    // Sending it would only make the server close the connection again, for ever.
                    droppedPublishes += pendingCount
                    outageMayHaveLostMessages = true
                    actions.append(.report(.lost(.pendingOverServerLimit)))
                } else {
                    actions.append(.send(pending))
                    writtenPublishes += UInt64(pendingCount)
                }
                pending = []
                pendingCount = 0
                largestPendingPayload = 0
            }
            let name = configuration.servers[server].description
            if hasConnectedBefore {
                actions.append(.report(.reconnected(server: name, possiblyLostMessages: outageMayHaveLostMessages)))
            } else {
                actions.append(.report(.connected(server: name)))
            }
            hasConnectedBefore = true
            outageMayHaveLostMessages = false
            return actions
        case .connected:
            outstandingPings = 0
            return []
        case .draining:
            return endsDrain ? closeForGood(nil, closeSocket: true) : []
        case .idle, .connecting, .waitingToReconnect, .closed:
            return []
        }
    }

    public mutating func pingReceived(now: Instant) -> [Action] {
        switch state {
        case .connecting, .handshaking, .connected, .draining:
            var pong: [UInt8] = []
            NATSEncoder.pong(into: &pong)
            return [.send(pong)]
        case .idle, .waitingToReconnect, .closed:
            return []
        }
    }

    public mutating func errorReceived(_ error: NATSServerError, now: Instant) -> [Action] {
        switch state {
        case .idle, .waitingToReconnect, .closed: return []
        default: break
        }
        guard error.closesConnection else { return [.report(.serverError(error))] }
        switch error.kind {
        case .authorizationViolation, .authorizationTimeout:
            consecutiveAuthorizationFailures += 1
            if consecutiveAuthorizationFailures >= 2 * configuration.servers.count {
                return closeForGood(.server(error), closeSocket: true)
            }
        case .tlsRequired:
            return connectionEnded(.tlsRequired, now: now)
        default:
            break
        }
        return connectionEnded(.server(error), now: now)
    }

    /// The server closed the socket, reading or writing failed, or its bytes broke the protocol.
    public mutating func connectionLost(_ error: NATSError, now: Instant) -> [Action] {
        connectionEnded(error, now: now)
    }

    public mutating func timerFired(now: Instant) -> [Action] {
        switch state {
        case .connecting(_, let deadline), .handshaking(_, let deadline):
            guard now >= deadline else { return [] }
            return connectionEnded(.connectTimedOut, now: now)
        case .connected(let server, let nextPing):
            guard now >= nextPing else { return [] }
            if outstandingPings >= configuration.maxOutstandingPings {
                return connectionEnded(.staleConnection, now: now)
            }
            outstandingPings += 1
            pingMarks.append(PingMark(writtenPublishes: writtenPublishes))
            state = .connected(server: server, nextPing: now + configuration.pingInterval)
            var ping: [UInt8] = []
            NATSEncoder.ping(into: &ping)
            return [.send(ping)]
        case .waitingToReconnect(let server, let at):
            guard now >= at else { return [] }
            state = .connecting(server: server, deadline: now + configuration.connectTimeout)
            return [.connect(server: server)]
        case .draining(let deadline):
            guard now >= deadline else { return [] }
            return closeForGood(.drainTimedOut, closeSocket: true)
        case .idle, .closed:
            return []
        }
    }

    /// Ends the current connection or attempt and plans the next one.
    private mutating func connectionEnded(_ error: NATSError, now: Instant) -> [Action] {
        var actions: [Action] = []
        let server: Int
        switch state {
        case .idle, .waitingToReconnect, .closed:
            return []
        case .draining:
            return closeForGood(error, closeSocket: true)
        case .connecting(let attempted, _), .handshaking(let attempted, _):
            server = attempted
            actions += [
                .closeSocket, .report(.attemptFailed(server: configuration.servers[attempted].description, error)),
            ]
        case .connected(let lost, _):
            server = lost
            if !subscriptions.isEmpty || writtenPublishes > confirmedPublishes { outageMayHaveLostMessages = true }
            actions += [.closeSocket, .report(.disconnected(error))]
        }
        actions += failFlushes()
        outstandingPings = 0
        let next = (server + 1) % configuration.servers.count
        let delay = reconnectDelay()
        if case .connected = state {} else { failedAttempts += 1 }
        state = .waitingToReconnect(server: next, at: now + delay)
        return actions
    }

    /// `reconnectBackoffMin` doubled per failed attempt up to `reconnectBackoffMax`, plus up to half of jitter.
    private mutating func reconnectDelay() -> Duration {
        let floor = configuration.reconnectBackoffMin.nanosecondsClamped
        let ceiling = max(floor, configuration.reconnectBackoffMax.nanosecondsClamped)
        var base = floor
        for _ in 0..<min(failedAttempts, 62) where base < ceiling { base = base > ceiling / 2 ? ceiling : base * 2 }
        base = min(base, ceiling)
        let jitter = base < 2 ? 0 : UInt64.random(in: 0...(base / 2), using: &random)
        return .nanoseconds(Int64(clamping: base + jitter))
    }

    // MARK: Closing

    public mutating func closeRequested(now: Instant) -> [Action] {
        switch state {
        case .connected:
            var bytes: [UInt8] = []
            for sid in subscriptions.keys.sorted() {
                NATSEncoder.unsubscribe(sid: NATSSubscriptionID(sid), into: &bytes)
            }
            NATSEncoder.ping(into: &bytes)
            pingMarks.append(PingMark(writtenPublishes: writtenPublishes, endsDrain: true))
            state = .draining(deadline: now + configuration.drainTimeout)
            return [.send(bytes)]
        case .connecting, .handshaking:
            return closeForGood(nil, closeSocket: true)
        case .idle, .waitingToReconnect:
            return closeForGood(nil, closeSocket: false)
        case .draining, .closed:
            return []
        }
    }

    private mutating func closeForGood(_ error: NATSError?, closeSocket: Bool) -> [Action] {
        var actions: [Action] = closeSocket ? [.closeSocket] : []
        if pendingCount > 0 {
            droppedPublishes += pendingCount
            actions.append(.report(.lost(.closedWhilePending)))
            pending = []
            pendingCount = 0
        }
        state = .closed
        subscriptions.removeAll()
        actions += failFlushes()
        actions.append(.report(.closed(error)))
        return actions
    }

    /// Ends every flush still waiting: its PONG will not come on a closed socket.
    private mutating func failFlushes() -> [Action] {
        let failed = pingMarks.compactMap { $0.flush.map { Action.completeFlush(token: $0, confirmed: false) } }
        pingMarks = []
        return failed
    }

    // MARK: Flushing

    /// Sends a PING whose PONG says the server has read everything written before it; `.completeFlush(token)`
    /// follows (unconfirmed when no connection is confirmed or it ends first).
    public mutating func flushRequested(token: UInt64) -> [Action] {
        switch state {
        case .handshaking, .connected:
            var ping: [UInt8] = []
            NATSEncoder.ping(into: &ping)
            pingMarks.append(PingMark(writtenPublishes: writtenPublishes, flush: token))
            return [.send(ping)]
        default:
            return [.completeFlush(token: token, confirmed: false)]
        }
    }

    // MARK: Publishing

    /// Decides about one publish of `payloadCount` bytes that encodes to `encodedCount`, with `unsentOutput`
    /// bytes already waiting for the socket.
    public mutating func publishRequested(payloadCount: Int, encodedCount: Int, unsentOutput: Int) -> PublishDecision {
        switch state {
        case .draining, .closed:
            return .reject(.closed)
        default:
            break
        }
        if let limit = serverInfo?.maxPayload, limit > 0, payloadCount > limit {
            return .reject(.payloadTooLarge(size: payloadCount, limit: limit))
        }
        if case .connected = state {
            if unsentOutput >= configuration.writeHighWaterMark { return drop(.backpressure) }
            writtenPublishes += 1
            dropping = false
            return .write
        }
        if pending.count + encodedCount > configuration.pendingBufferBytes {
            if hasConnectedBefore { outageMayHaveLostMessages = true }
            return drop(.pendingBufferFull)
        }
        pendingCount += 1
        largestPendingPayload = max(largestPendingPayload, payloadCount)
        dropping = false
        return .pend
    }

    /// Encodes a publish `publishRequested` answered `.pend` to.
    public mutating func appendPending(_ encode: (inout [UInt8]) -> Void) {
        encode(&pending)
    }

    private mutating func drop(_ reason: NATSDropReason) -> PublishDecision {
        droppedPublishes += 1
        let first = !dropping
        dropping = true
        return .drop(reason, reportLost: first)
    }

    // MARK: Subscriptions

    public mutating func subscribeRequested(
        _ sid: NATSSubscriptionID, subject: String, queue: String?
    ) throws(NATSError) -> [Action] {
        if case .draining = state { throw .closed }
        if state == .closed { throw .closed }
        subscriptions[sid.rawValue] = Subscription(subject: subject, queue: queue)
        // Messages published before the server has this SUB are not for it; after a loss, say so at reconnect.
        if hasConnectedBefore && !isConnected { outageMayHaveLostMessages = true }
        guard canWriteOperations else { return [] }
        var bytes: [UInt8] = []
        NATSEncoder.subscribe(subject: subject, queue: queue, sid: sid, into: &bytes)
        return [.send(bytes)]
    }

    /// Removes a subscription now, or (`max`) once it has delivered that many messages in all.
    public mutating func unsubscribeRequested(_ sid: NATSSubscriptionID, max: Int? = nil) -> [Action] {
        guard var subscription = subscriptions[sid.rawValue], state != .closed else { return [] }
        if case .draining = state { return [] } // the drain has unsubscribed everything already
        var bytes: [UInt8] = []
        if let max, subscription.delivered < max {
            subscription.max = max
            subscriptions[sid.rawValue] = subscription
            NATSEncoder.unsubscribe(sid: sid, max: max - subscription.deliveredAtSubscribe, into: &bytes)
        } else {
            subscriptions[sid.rawValue] = nil
            NATSEncoder.unsubscribe(sid: sid, into: &bytes)
        }
        return canWriteOperations ? [.send(bytes)] : []
    }

    /// Whether a message for `sid` goes to its handler (false once unsubscribed: some may still be on the way).
    public mutating func messageReceived(_ sid: NATSSubscriptionID) -> Bool {
        guard var subscription = subscriptions[sid.rawValue] else { return false }
        subscription.delivered += 1
        if let max = subscription.max, subscription.delivered >= max {
            subscriptions[sid.rawValue] = nil
        } else {
            subscriptions[sid.rawValue] = subscription
        }
        return true
    }

    /// Whether `sid` is a live subscription.
    public func isSubscribed(_ sid: NATSSubscriptionID) -> Bool { subscriptions[sid.rawValue] != nil }
}

/// SplitMix64 (Steele, Lea, Flood 2014): the jitter's generator, seeded so tests see fixed delays.
struct BackoffJitterGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

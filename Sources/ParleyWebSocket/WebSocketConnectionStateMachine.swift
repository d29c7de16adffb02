import ParleyNet

/// The life of one WebSocket connection after the handshake, as a pure state machine (RFC 6455 §5-§7).
///
/// Methods are named after events and return the actions the driver runs (STYLE.md §2); the clock is
/// injected as `now` on every event, so heartbeats and close timeouts are testable without waiting.
///
/// It reassembles fragmented messages (§5.4) with control frames interleaved, bounds a message across its
/// fragments (1009), validates text incrementally and fails fast on the first invalid byte (1007), runs the
/// closing handshake in both directions (§7), answers pings, and pings an idle peer every `pingInterval`,
/// dropping one that leaves `missedPongLimit` pings in a row unanswered. On request it probes the peer at once
/// (`probe`): a ping, and the connection dropped unless some frame arrives before the probe's deadline.
///
/// Failing the connection (§7.1.7) sends a Close with the error's code, then keeps reading until the peer's
/// Close arrives or `closeTimeout` passes, and only then closes TCP: closing at once with unread input
/// would reset the connection and could destroy our Close frame before the peer reads it.
public struct WebSocketConnectionStateMachine: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Largest message, summed over its fragments.
        public var maxMessageBytes: Int = 1 << 20
        /// Ping a peer that sent nothing for this long; nil turns heartbeats off.
        public var pingInterval: Duration? = .seconds(30)
        /// Unanswered pings in a row after which the peer is considered gone.
        public var missedPongLimit: Int = 2
        /// How long to wait for the peer's Close after sending ours.
        public var closeTimeout: Duration = .seconds(5)

        public init() {}
    }

    enum State: Sendable, Hashable {
        case open
        /// Our Close is out; waiting for the peer's until the deadline.
        case closeSent(deadline: Instant)
        case closed
    }

    enum MessageKind: Sendable, Hashable {
        case text
        case binary
    }

    public let configuration: Configuration
    private(set) var state: State = .open
    /// The message being reassembled from fragments, if any.
    private var assembling: MessageKind?
    private var fragments: [UInt8] = []
    private var validator = UTF8Validator()
    private var lastReceivedAt: Instant
    private var lastPingSentAt: Instant?
    private var unansweredPings = 0
    private var pingCounter: UInt32 = 0
    /// A probe is waiting for any frame from the peer until then.
    private var probeDeadline: Instant?

    /// The code and reason of the peer's Close frame, once received (code nil: the frame had none).
    public private(set) var receivedClose: (code: WebSocketCloseCode?, reason: String)?
    /// The code of the Close frame we sent, if any.
    public private(set) var sentCloseCode: WebSocketCloseCode?

    public init(configuration: Configuration = Configuration(), now: Instant) {
        self.configuration = configuration
        lastReceivedAt = now
    }

    /// Data frames may still be sent (no Close sent or received).
    public var canSendData: Bool { state == .open }

    public var isClosed: Bool { state == .closed }

    /// When `timerFired` next has something to do: the close deadline, or the next heartbeat check.
    public var nextDeadline: Instant? {
        switch state {
        case .open:
            let heartbeat = configuration.pingInterval.map {
                max(lastReceivedAt, lastPingSentAt ?? lastReceivedAt) + $0
            }
            guard let probeDeadline else { return heartbeat }
            return heartbeat.map { min($0, probeDeadline) } ?? probeDeadline
        case .closeSent(let deadline):
            return deadline
        case .closed:
            return nil
        }
    }

    /// The code to report to the application when the connection ends: the peer's, else ours, else 1006.
    public var closeCodeForApplication: (code: WebSocketCloseCode, reason: String) {
        if let receivedClose { return (receivedClose.code ?? .noStatusReceived, receivedClose.reason) }
        if let sentCloseCode { return (sentCloseCode, "") }
        return (.abnormalClosure, "")
    }

    // MARK: Events

    /// A frame arrived (already checked by the parser: masking, opcode, RSV bits, control frame rules).
    public mutating func frameReceived(_ frame: WebSocketFrame, now: Instant) -> WebSocketActions {
        // Any frame proves the peer is alive.
        lastReceivedAt = now
        unansweredPings = 0
        probeDeadline = nil
        switch state {
        case .closed:
            return .none
        case .closeSent:
            // §5.5.1: after our Close, everything but the peer's Close is discarded.
            guard frame.opcode == .close else { return .none }
            if receivedClose == nil { receivedClose = (try? WebSocketClosePayload.decode(frame.payload)) ?? (nil, "") }
            state = .closed
            return [.closeTransport]
        case .open:
            break
        }
        switch frame.opcode {
        case .ping:
            return [.sendPong(frame.payload)]
        case .pong:
            // Unsolicited pongs are allowed (§5.5.3); any of them counts as an answer.
            return .none
        case .close:
            return closeReceived(frame.payload)
        case .text, .binary:
            return dataFrameReceived(frame, kind: frame.opcode == .text ? .text : .binary, now: now)
        case .continuation:
            return continuationReceived(frame, now: now)
        }
    }

    /// The parser refused a frame (1002/1009): fail the connection.
    public mutating func parseFailed(_ error: WebSocketProtocolError, now: Instant) -> WebSocketActions {
        fail(error, now: now)
    }

    /// The driver's timer went off: send a heartbeat ping, give up on a silent peer, or end a closing
    /// handshake the peer never finished.
    public mutating func timerFired(now: Instant) -> WebSocketActions {
        switch state {
        case .closed:
            return .none
        case .closeSent(let deadline):
            guard now >= deadline else { return .none }
            state = .closed
            return [.dropTransport]
        case .open:
            if let probeDeadline, now >= probeDeadline { return heartbeatLost(reason: "no answer to a liveness probe") }
            guard let interval = configuration.pingInterval else { return .none }
            if now.since(lastReceivedAt) < interval { return .none }
            if let lastPingSentAt, now.since(lastPingSentAt) < interval { return .none }
            if unansweredPings >= configuration.missedPongLimit { return heartbeatLost(reason: "heartbeat timeout") }
            unansweredPings += 1
            return ping(now: now)
        }
    }

    /// The application doubts the peer is still there (a newer connection of its session came in): ping it now
    /// and drop the connection, as a missed heartbeat (4001), unless some frame arrives within `timeout`. A probe
    /// already waiting keeps its earlier deadline; a peer that answers is left alone.
    public mutating func probe(within timeout: Duration, now: Instant) -> WebSocketActions {
        guard case .open = state else { return .none }
        if let probeDeadline, probeDeadline <= now + timeout { return .none }
        probeDeadline = now + timeout
        return ping(now: now)
    }

    /// The application (or a server shutdown, with 1001) asks to close: start the closing handshake.
    public mutating func closeRequested(code: WebSocketCloseCode, reason: String, now: Instant) -> WebSocketActions {
        guard case .open = state else { return .none }
        return startClosing(code: code, reason: reason, now: now)
    }

    /// The outgoing queue went over its bound: the peer is not reading. Close with 4000; the driver has
    /// already dropped the queued messages, so the Close is next on the wire.
    public mutating func outgoingQueueOverflowed(now: Instant) -> WebSocketActions {
        guard case .open = state else { return .none }
        return startClosing(code: .slowConsumer, reason: "outgoing queue overflow", now: now)
    }

    /// The TCP connection is gone, for whatever reason.
    public mutating func transportClosed() {
        state = .closed
        dropMessage()
    }

    // MARK: Internals

    private mutating func ping(now: Instant) -> WebSocketActions {
        lastPingSentAt = now
        pingCounter &+= 1
        let n = pingCounter
        return [
            .sendPing([
                UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16),
                UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n),
            ])
        ]
    }

    /// The peer is presumed gone: nothing to wait for, so no closing handshake.
    private mutating func heartbeatLost(reason: String) -> WebSocketActions {
        state = .closed
        sentCloseCode = .heartbeatTimeout
        dropMessage()
        return [.sendClose(.heartbeatTimeout, reason: reason), .dropTransport]
    }

    private mutating func dataFrameReceived(_ frame: WebSocketFrame, kind: MessageKind, now: Instant)
        -> WebSocketActions
    {
        if assembling != nil {
            return fail(.protocolViolation("new data frame while a fragmented message is in progress"), now: now)
        }
        if frame.payload.count > configuration.maxMessageBytes {
            return fail(.tooBig("message over \(configuration.maxMessageBytes) bytes"), now: now)
        }
        if frame.fin {
            // The common case, an unfragmented message: no copy into the reassembly buffer.
            switch kind {
            case .binary:
                return [.deliverBinary(frame.payload)]
            case .text:
                guard let text = String(validating: frame.payload, as: UTF8.self) else {
                    return fail(.invalidUTF8("text message is not valid UTF-8"), now: now)
                }
                return [.deliverText(text)]
            }
        }
        if kind == .text {
            validator = UTF8Validator()
            if !validator.validate(frame.payload) {
                return fail(.invalidUTF8("text message is not valid UTF-8"), now: now)
            }
        }
        assembling = kind
        fragments = frame.payload
        return .none
    }

    private mutating func continuationReceived(_ frame: WebSocketFrame, now: Instant) -> WebSocketActions {
        guard let kind = assembling else {
            return fail(.protocolViolation("continuation frame without a message to continue"), now: now)
        }
        if frame.payload.count > configuration.maxMessageBytes - fragments.count {
            return fail(.tooBig("message over \(configuration.maxMessageBytes) bytes"), now: now)
        }
        if kind == .text && !validator.validate(frame.payload) {
            return fail(.invalidUTF8("text message is not valid UTF-8"), now: now)
        }
        fragments.append(contentsOf: frame.payload)
        guard frame.fin else { return .none }
        if kind == .text && !validator.isComplete {
            return fail(.invalidUTF8("text message ends inside a UTF-8 sequence"), now: now)
        }
        let bytes = fragments
        dropMessage()
        switch kind {
        case .binary:
            return [.deliverBinary(bytes)]
        case .text:
            return [.deliverText(String(decoding: bytes, as: UTF8.self))]
        }
    }

    private mutating func closeReceived(_ payload: [UInt8]) -> WebSocketActions {
        dropMessage()
        state = .closed
        do {
            let (code, reason) = try WebSocketClosePayload.decode(payload)
            receivedClose = (code, reason)
            // §5.5.1: answer with a Close, echoing the code (1000 when the peer's Close had none).
            let reply = code ?? .normalClosure
            sentCloseCode = reply
            return [.sendClose(reply, reason: ""), .closeTransport]
        } catch {
            receivedClose = (nil, "")
            sentCloseCode = error.closeCode
            return [.sendClose(error.closeCode, reason: error.reason), .closeTransport]
        }
    }

    private mutating func fail(_ error: WebSocketProtocolError, now: Instant) -> WebSocketActions {
        switch state {
        case .open:
            return startClosing(code: error.closeCode, reason: error.reason, now: now)
        case .closeSent:
            // A second failure while waiting for the peer's Close: stop waiting.
            state = .closed
            return [.closeTransport]
        case .closed:
            return .none
        }
    }

    private mutating func startClosing(code: WebSocketCloseCode, reason: String, now: Instant) -> WebSocketActions {
        dropMessage()
        sentCloseCode = code
        state = .closeSent(deadline: now + configuration.closeTimeout)
        return [.sendClose(code, reason: reason)]
    }

    private mutating func dropMessage() {
        assembling = nil
        fragments = []
        validator = UTF8Validator()
    }
}

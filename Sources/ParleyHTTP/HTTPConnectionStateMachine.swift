import ParleyNet

/// The life of one HTTP/1.1 connection as a pure state machine: which request is being read or answered, when
/// the next pipelined one may start, when to stop reading, when to close, and the header, idle and write-progress
/// timeouts. (NIO's `HTTPServerPipelineHandler` keeps the same facts in its `ConnectionState`.)
///
/// `HTTPConnection` is the thin driver around it: it owns the socket, the parser, the buffers and the handler tasks,
/// tells the machine what happened (methods named after events, in the past tense) and runs the action each returns
/// (a command). Time comes in as `now` on the events that need it, never read here, and so do the amounts of unsent
/// output and unparsed input (the driver owns those buffers): every rule is testable without a socket or a wait.
///
/// Hot path: a struct stored in the connection and mutated in place; every event is a switch over a small enum and
/// returns one small action enum, so nothing is allocated per event.
struct HTTPConnectionStateMachine {
    struct Configuration: Sendable, Hashable {
        /// The whole head must arrive within this after its first byte (slowloris).
        var headerTimeout: Duration
        /// Between requests, or between the pieces of a request's body.
        var idleTimeout: Duration
        /// A peer that takes no bytes of pending output for this long is dropped.
        var writeTimeout: Duration
        /// Past this many unsent bytes reading stops (HTTP), or the upgrade handler is told to wait.
        var maxPendingOutputBytes: Int
        /// Past this many unparsed bytes behind a request being answered, reading stops.
        var maxPipelinedInputBytes: Int
        /// A body (buffered or streamed) must arrive at this average rate, counted from its head, once
        /// `bodyGracePeriod` has passed; 0 disables the check. An average after a grace period, not a total
        /// deadline, so a large upload over a slow mobile link is never cut off while a trickle is.
        var minimumBodyBytesPerSecond: Int
        var bodyGracePeriod: Duration
        /// How long a closing connection keeps reading (and dropping) what the peer still sends after the last answer.
        var lingeringTime: Duration = .seconds(2)

        init(
            headerTimeout: Duration, idleTimeout: Duration, writeTimeout: Duration, maxPendingOutputBytes: Int,
            maxPipelinedInputBytes: Int, minimumBodyBytesPerSecond: Int = 0, bodyGracePeriod: Duration = .seconds(10)
        ) {
            self.headerTimeout = headerTimeout
            self.idleTimeout = idleTimeout
            self.writeTimeout = writeTimeout
            self.maxPendingOutputBytes = maxPendingOutputBytes
            self.maxPipelinedInputBytes = maxPipelinedInputBytes
            self.minimumBodyBytesPerSecond = minimumBodyBytesPerSecond
            self.bodyGracePeriod = bodyGracePeriod
        }

        init(_ server: HTTPServerConfiguration) {
            self.init(
                headerTimeout: server.headerTimeout, idleTimeout: server.idleTimeout,
                writeTimeout: server.writeTimeout, maxPendingOutputBytes: server.maxPendingOutputBytes,
                maxPipelinedInputBytes: server.maxHeaderBytes * 4,
                minimumBodyBytesPerSecond: server.minimumBodyBytesPerSecond,
                bodyGracePeriod: server.bodyGracePeriod)
        }
    }

    enum State: Sendable, Hashable {
        /// Between requests: nothing of the next one has arrived (keep-alive; the idle timeout runs).
        case idle
        /// Part of a head has arrived, or pipelined bytes wait behind an answer; the head must be complete
        /// within the header timeout from `since`.
        case readingHead(since: Instant)
        /// The head is in and its buffered body is arriving; the request is dispatched at its end.
        case readingBody
        /// A streamed route's handler runs while the body still arrives; `readingPaused` while its consumer is
        /// behind (past the stream's high-water mark).
        case streamingBody(readingPaused: Bool)
        /// The whole request is read and its handler runs; pipelined input waits in the parser.
        case awaitingResponse
        /// No further request: once the answer in flight (when `responsePending`) and the queued output are
        /// written, close. (`Connection: close`, a parse error or timeout answer, a peer that half-closed,
        /// shutdown, an upgrade handler closing after a flush.)
        case closing(responsePending: Bool)
        /// Everything is written and the sending side is shut down; what the peer still sends (the rest of a body
        /// that was answered without being read) is read and dropped until it closes or `until`. Closing at once
        /// with unread input would make the kernel answer with a reset, which can destroy the answer before the
        /// client reads it (nginx's lingering close).
        case lingering(until: Instant)
        /// Switched protocols: bytes belong to the upgrade handler. `writerWaiting`: a write of its went over the
        /// high-water mark and it waits to hear that the output drained.
        case upgraded(readingPaused: Bool, writerWaiting: Bool)
        case closed
    }

    let configuration: Configuration
    private(set) var state: State = .idle
    /// Set at shutdown: every later answer carries `Connection: close`.
    private(set) var shuttingDown = false
    /// When bytes last arrived or an answer was last queued: the idle timeout counts from here, and a request
    /// dispatched now is timed from here (no clock read of its own).
    private(set) var lastActivity: Instant
    /// When the peer last took bytes, or an answer was last queued: the write timeout counts from here.
    private(set) var lastWriteProgress: Instant
    /// The body's rate is measured from here (its head, or the last time its consumer held reading paused) over
    /// the body bytes received since.
    private(set) var bodyRateSince: Instant
    private(set) var bodyRateBytes = 0

    init(configuration: Configuration, now: Instant) {
        self.configuration = configuration
        lastActivity = now
        lastWriteProgress = now
        bodyRateSince = now
    }

    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    var isUpgraded: Bool {
        if case .upgraded = state { return true }
        return false
    }

    /// Requests are being read or answered (not closing, upgraded or closed): a peer's half-close is an event to
    /// decide on (`peerHalfClosed`), not the end.
    var isServingRequests: Bool {
        switch state {
        case .idle, .readingHead, .readingBody, .streamingBody, .awaitingResponse: return true
        case .closing, .lingering, .upgraded, .closed: return false
        }
    }

    // MARK: Input

    /// Bytes arrived from the socket.
    @inline(__always)
    mutating func bytesReceived(now: Instant) -> ReadAction {
        lastActivity = now
        switch state {
        case .idle:
            state = .readingHead(since: now)
            return .parse
        case .readingHead, .readingBody, .streamingBody, .awaitingResponse:
            return .parse
        case .upgraded:
            return .deliverToUpgradeHandler
        case .closing, .lingering, .closed:
            return .discard
        }
    }

    /// Whether the parser's next event may be taken now. A request being answered holds back the next pipelined
    /// one (a body still streaming in excepted), and a new request starts only once the previous answer is out:
    /// a client that does not read its answers gets no more of them.
    @inline(__always)
    func acceptsInput(pendingOutputBytes: Int) -> Bool {
        switch state {
        case .idle, .readingHead:
            return pendingOutputBytes == 0
        case .readingBody, .streamingBody:
            return true
        case .awaitingResponse, .closing, .lingering, .upgraded, .closed:
            return false
        }
    }

    /// A request's head was parsed at `now`; `routed`: a route takes it (else the answer is 404 or 405), `bodyLimit`
    /// is its route's, `streamed` whether the route reads the body as a stream (its handler starts now).
    mutating func headReceived(
        _ head: borrowing HTTPRequestHead, routed: Bool = true, bodyLimit: Int, streamed: Bool, now: Instant
    ) -> HeadAction {
        bodyRateSince = now
        bodyRateBytes = 0
        if !routed && head.framing.hasBody {
            // The answer is known from the head alone: reading a body nobody wants (100 MB, or never ending) would
            // only cost time and memory, and the framing of what follows it cannot be skipped without reading it.
            state = .closing(responsePending: true)
            return .answerWithoutReadingBody
        }
        // RFC 9110 §10.1.1: say 100 only when the body will be read; a declared length over the limit gets the
        // parser's 413 next instead.
        var sendContinue = head.expectContinue && head.version == .http1_1
        if sendContinue, case .contentLength(let length) = head.framing, length > bodyLimit { sendContinue = false }
        if streamed {
            state = .streamingBody(readingPaused: false)
            return .dispatchWithBodyStream(sendContinue: sendContinue)
        }
        state = .readingBody
        return .readBody(sendContinue: sendContinue)
    }

    /// A run of `byteCount` body bytes was parsed.
    @inline(__always)
    mutating func bodyReceived(byteCount: Int) -> BodyAction {
        bodyRateBytes &+= byteCount
        switch state {
        case .readingBody: return .buffer
        case .streamingBody: return .stream
        default: return .discard
        }
    }

    /// The parser has the whole request.
    @inline(__always)
    mutating func requestEnded() -> EndAction {
        switch state {
        case .readingBody:
            state = .awaitingResponse
            return .dispatch
        case .streamingBody:
            state = .awaitingResponse
            return .finishBodyStream
        default:
            return .none
        }
    }

    /// The parser refused the input (400, 413, 431, 501, 505): the framing of what follows cannot be trusted, so
    /// the connection ends.
    mutating func parseFailed() -> ParseFailureAction {
        if case .streamingBody = state {
            // The handler owns the answer for a streamed request; it sees the failure through the stream.
            state = .closing(responsePending: true)
            return .failBodyStreamThenCloseAfterResponse
        }
        state = .closing(responsePending: false)
        return .answerErrorThenClose
    }

    /// The buffered body did not fit in the server's budget for buffered bodies (every connection's together): the
    /// request is refused (503) and, its body left unread, the connection ends.
    mutating func bodyBudgetExhausted() -> BudgetAction {
        guard case .readingBody = state else { return .none }
        state = .closing(responsePending: false)
        return .answerServiceUnavailableThenClose
    }

    /// The body stream's consumer is behind (past the stream's high-water mark): stop reading until it catches up.
    mutating func bodyConsumerFellBehind() {
        if case .streamingBody = state { state = .streamingBody(readingPaused: true) }
    }

    /// The body stream's consumer caught up. It may say so late, after its request ended: then nothing changes.
    /// `.processBufferedInput` when input already read may now be parsed.
    mutating func bodyConsumerCaughtUp(pendingOutputBytes: Int, bufferedInputBytes: Int) -> ResumeAction {
        if case .streamingBody = state { state = .streamingBody(readingPaused: false) }
        return bufferedInputBytes > 0 && acceptsInput(pendingOutputBytes: pendingOutputBytes)
            ? .processBufferedInput : .none
    }

    // MARK: Output

    /// The handler's answer is ready. `requestKeepAlive`: the request allows another after it (RFC 9112 §9.3);
    /// `responseCloses`: the answer asks to close; `upgrade`: a 101 carrying an upgrade handler;
    /// `bufferedInputBytes`: pipelined bytes already read (the next head's header timeout starts now).
    @inline(__always)
    mutating func responseReady(
        requestKeepAlive: Bool, responseCloses: Bool, upgrade: Bool, bufferedInputBytes: Int,
        now: Instant
    ) -> ResponseAction {
        let action: ResponseAction
        switch state {
        case .awaitingResponse:
            if upgrade {
                state = .upgraded(readingPaused: false, writerWaiting: false)
                action = .writeThenUpgrade
            } else if requestKeepAlive && !responseCloses && !shuttingDown {
                state = bufferedInputBytes > 0 ? .readingHead(since: now) : .idle
                action = .write
            } else {
                state = .closing(responsePending: false)
                action = .writeThenClose(failBodyStream: false)
            }
        case .streamingBody:
            // Answered before the body was read: the rest of it will not be, so the connection cannot go on.
            state = .closing(responsePending: false)
            action = .writeThenClose(failBodyStream: true)
        case .closing(responsePending: true):
            state = .closing(responsePending: false)
            action = .writeThenClose(failBodyStream: false)
        case .idle, .readingHead, .readingBody, .closing(responsePending: false), .lingering, .upgraded, .closed:
            // Closed meanwhile (nothing else can be waiting for an answer).
            return .discard
        }
        lastActivity = now
        lastWriteProgress = now
        return action
    }

    /// The peer took bytes.
    @inline(__always)
    mutating func bytesSent(now: Instant) {
        lastWriteProgress = now
    }

    /// Everything queued is written (also after an answer that went out whole at once).
    @inline(__always)
    mutating func outputDrained(bufferedInputBytes: Int, now: Instant) -> DrainedAction {
        switch state {
        case .closing(let responsePending):
            guard !responsePending else { return .none }
            state = .lingering(until: now + configuration.lingeringTime)
            return .lingerThenClose
        case .lingering:
            return .none
        case .upgraded(let readingPaused, let writerWaiting):
            guard writerWaiting else { return .none }
            state = .upgraded(readingPaused: readingPaused, writerWaiting: false)
            return .notifyUpgradeHandlerWritable
        case .closed:
            return .none
        case .idle, .readingHead, .readingBody, .streamingBody, .awaitingResponse:
            // A pipelined request that waited for this answer to go out may start.
            return bufferedInputBytes > 0 && acceptsInput(pendingOutputBytes: 0) ? .processBufferedInput : .none
        }
    }

    /// Whether to read from the socket now: not while closing, not while the handler paused reading, not past
    /// `maxPendingOutputBytes` of unsent output, and not past `maxPipelinedInputBytes` of input waiting behind a
    /// request being answered (backpressure: a client cannot make the server buffer without bound).
    @inline(__always)
    func wantsToRead(pendingOutputBytes: Int, bufferedInputBytes: Int) -> Bool {
        switch state {
        case .closing, .closed:
            return false
        case .lingering:
            return true
        case .streamingBody(let readingPaused), .upgraded(let readingPaused, _):
            if readingPaused { return false }
        case .awaitingResponse:
            if bufferedInputBytes > configuration.maxPipelinedInputBytes { return false }
        case .idle, .readingHead, .readingBody:
            break
        }
        return pendingOutputBytes <= configuration.maxPendingOutputBytes
    }

    /// The readiness to watch for: readable while `wantsToRead`, writable while output is pending. While closing
    /// nothing more is read, so a peer's half-close changes nothing and is not watched (it would wake the loop on
    /// every wait until the answer is out); a reset still ends the connection.
    @inline(__always)
    func interest(pendingOutputBytes: Int, bufferedInputBytes: Int) -> IOEvents {
        var wanted: IOEvents
        switch state {
        case .closed: return []
        case .closing: wanted = .ignoringPeerHalfClose
        default: wanted = []
        }
        if wantsToRead(pendingOutputBytes: pendingOutputBytes, bufferedInputBytes: bufferedInputBytes) {
            wanted.insert(.readable)
        }
        if pendingOutputBytes > 0 { wanted.insert(.writable) }
        return wanted
    }

    // MARK: Upgraded byte stream

    /// The upgrade handler queued bytes. False asks it to wait for `notifyUpgradeHandlerWritable`: the unsent output
    /// is over the high-water mark.
    mutating func upgradeHandlerWrote(pendingOutputBytes: Int) -> Bool {
        guard pendingOutputBytes > configuration.maxPendingOutputBytes else { return true }
        if case .upgraded(let readingPaused, _) = state {
            state = .upgraded(readingPaused: readingPaused, writerWaiting: true)
        }
        return false
    }

    /// The upgrade handler stops (`paused`) or resumes reading.
    mutating func upgradeHandlerPausedReading(_ paused: Bool) {
        if case .upgraded(_, let writerWaiting) = state {
            state = .upgraded(readingPaused: paused, writerWaiting: writerWaiting)
        }
    }

    /// The upgrade handler closes the connection, after writing what is queued when `flush`.
    mutating func upgradeHandlerClosed(flush: Bool, pendingOutputBytes: Int) -> CloseAction {
        guard flush && pendingOutputBytes > 0 else { return .close }
        state = .closing(responsePending: false)
        return .closeAfterOutput
    }

    // MARK: Lifecycle

    /// The peer closed its side (a read returned 0): no request will follow. An answer in flight, or still being
    /// written, is finished first (the client may have half-closed after sending).
    mutating func peerHalfClosed(pendingOutputBytes: Int) -> HalfCloseAction {
        switch state {
        case .awaitingResponse:
            state = .closing(responsePending: true)
            return .closeAfterAnswer(failBodyStream: false)
        case .streamingBody:
            // The body can never end: the handler hears it from the stream, and its answer still goes out.
            state = .closing(responsePending: true)
            return .closeAfterAnswer(failBodyStream: true)
        case .idle, .readingHead, .readingBody:
            // An unfinished request is dropped; an answer still being written is not.
            guard pendingOutputBytes > 0 else { return .close }
            state = .closing(responsePending: false)
            return .closeAfterAnswer(failBodyStream: false)
        case .closing:
            return .none
        case .lingering, .upgraded:
            return .close
        case .closed:
            return .none
        }
    }

    /// The loop's periodic sweep: the write-progress timeout while output is pending, else the header timeout
    /// (a head arriving too slowly), the idle timeout and the minimum rate on a body (answered 408; a streamed body's
    /// handler is told through its stream and answers), and the keep-alive idle timeout. A request being answered
    /// and an upgraded connection have no deadline here.
    mutating func sweep(now: Instant, pendingOutputBytes: Int) -> SweepAction {
        if pendingOutputBytes > 0 {
            return now.since(lastWriteProgress) > configuration.writeTimeout ? .close : .none
        }
        switch state {
        case .idle:
            return now.since(lastActivity) > configuration.idleTimeout ? .close : .none
        case .readingHead(let since):
            guard now.since(since) > configuration.headerTimeout else { return .none }
            state = .closing(responsePending: false)
            return .answerRequestTimeoutThenClose(.head)
        case .readingBody:
            guard let timeout = bodyTimeout(now: now) else { return .none }
            state = .closing(responsePending: false)
            return .answerRequestTimeoutThenClose(timeout)
        case .streamingBody(let readingPaused):
            if readingPaused {
                // Our consumer holds the client back, so the client is not measured meanwhile: the window restarts.
                bodyRateSince = now
                bodyRateBytes = 0
                return .none
            }
            guard let timeout = bodyTimeout(now: now) else { return .none }
            state = .closing(responsePending: true)
            return .failBodyStreamWithRequestTimeout(timeout)
        case .closing(let responsePending):
            // Nothing left to write and no answer to wait for: only the close is missing.
            return responsePending ? .none : .close
        case .lingering(let until):
            return now >= until ? .close : .none
        case .awaitingResponse, .upgraded, .closed:
            return .none
        }
    }

    /// Why a body still arriving has taken too long, if it has: nothing for the idle timeout, or too little for the
    /// minimum rate once the grace period is over.
    private func bodyTimeout(now: Instant) -> RequestTimeout? {
        let lastProgress = max(lastActivity, bodyRateSince)
        if now.since(lastProgress) > configuration.idleTimeout { return .bodyIdle }
        let rate = configuration.minimumBodyBytesPerSecond
        let elapsed = now.since(bodyRateSince)
        guard rate > 0, elapsed > configuration.bodyGracePeriod else { return nil }
        let elapsedMilliseconds = elapsed / .milliseconds(1)
        return Double(bodyRateBytes) * 1000 < Double(rate) * elapsedMilliseconds ? .bodyTooSlow : nil
    }

    /// The server is shutting down: close at once when nothing is in progress, after the queued output when only
    /// that is; a request being read or answered finishes, its answer carrying `Connection: close`.
    mutating func shutdownRequested(pendingOutputBytes: Int) -> ShutdownAction {
        shuttingDown = true
        switch state {
        case .idle, .readingHead:
            guard pendingOutputBytes > 0 else { return .close }
            state = .closing(responsePending: false)
            return .closeAfterOutput
        case .readingBody, .streamingBody, .awaitingResponse, .closing, .closed:
            return .none
        case .lingering:
            return .close
        case .upgraded:
            return .notifyUpgradeHandler
        }
    }

    /// The socket is closed (by an action above, an I/O error, or the server's final sweep).
    mutating func connectionClosed() {
        state = .closed
    }
}

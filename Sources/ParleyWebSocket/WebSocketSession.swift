import ParleyHTTP
import ParleyNet

/// One WebSocket connection: the thin driver around ``WebSocketFrameParser`` and
/// ``WebSocketConnectionStateMachine``, and the handle a ``WebSocketSessionHandler`` sends through.
///
/// Loop-confined like the connection it rides on: create, call and drop it on its loop's thread only.
/// Idle, it holds no buffers (the parser and the outgoing queue release theirs when drained) and one timer.
///
/// Outgoing data goes straight to the connection while it keeps up. When the connection reports
/// backpressure, later frames wait in a queue here; once that queue plus the connection's own unsent bytes
/// pass `maxBufferedOutgoingBytes`, the queue is dropped and the session closed with 4000 (`slowConsumer`),
/// so a client that stops reading costs a bounded amount of memory.
public final class WebSocketSession {
    public let context: WebSocketSessionContext
    public let loop: EventLoop
    let configuration: WebSocketConfiguration

    private var handler: (any WebSocketSessionHandler)?
    private var channel: ByteChannel?
    private var parser: WebSocketFrameParser
    private var machine: WebSocketConnectionStateMachine
    /// Frames waiting for the connection to drain (whole frames, back to back).
    private var queued: [UInt8] = []
    private var channelBackpressured = false
    /// A send answered `.backpressured`: call `sessionWritable` once everything is out.
    private var writableWanted = false
    private var readingPaused = false
    private var processing = false
    private var timer: EventLoop.TimerID?
    private var timerDeadline: Instant?
    private var finished = false

    init(loop: EventLoop, context: WebSocketSessionContext, configuration: WebSocketConfiguration) {
        self.loop = loop
        self.context = context
        self.configuration = configuration
        parser = WebSocketFrameParser(role: .server, maxFramePayloadBytes: configuration.maxFrameBytes)
        machine = WebSocketConnectionStateMachine(configuration: configuration.stateMachine, now: .now())
    }

    func attach(_ handler: any WebSocketSessionHandler) { self.handler = handler }

    // MARK: Sending (handler API)

    /// True until a Close is sent or received: data may be sent.
    public var isOpen: Bool { channel != nil && machine.canSendData }

    /// Bytes accepted but not yet written to the socket.
    public var bufferedOutgoingBytes: Int { queued.count + (channel?.bufferedOutputBytes ?? 0) }

    /// A handle other threads can use; it hops to this session's loop.
    public var handle: WebSocketSessionHandle { WebSocketSessionHandle(session: self) }

    @discardableResult
    public func send(text: String) -> WebSocketSendResult {
        guard isOpen else { return .dropped }
        return sendData(WebSocketFrameEncoder.server.encodeText(text))
    }

    @discardableResult
    public func send(binary: [UInt8]) -> WebSocketSendResult {
        guard isOpen else { return .dropped }
        return sendData(WebSocketFrameEncoder.server.encode(opcode: .binary, payload: binary))
    }

    /// Sends a complete data frame made by `WebSocketFrameEncoder.server` (unmasked, final): for fan-out,
    /// encode once and pass the same array to every recipient.
    @discardableResult
    public func send(encodedFrame: [UInt8]) -> WebSocketSendResult {
        guard isOpen else { return .dropped }
        return sendData(encodedFrame)
    }

    /// Starts the closing handshake (RFC 6455 §7.1.2); queued messages go out first. The TCP connection
    /// closes when the peer answers, or after `closeTimeout`.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        guard channel != nil else { return }
        run(machine.closeRequested(code: code, reason: reason, now: .now()))
        updateTimer()
    }

    /// Pings the peer now and closes with 4001 unless some frame arrives within `timeout` (see
    /// `WebSocketConnectionStateMachine.probe`). Not while reading is paused: the peer sent more than we keep up
    /// with a moment ago, and its pong would wait unread behind its own frames.
    public func probe(within timeout: Duration) {
        guard channel != nil, !readingPaused else { return }
        run(machine.probe(within: timeout, now: .now()))
        updateTimer()
    }

    /// Stops reading from the socket (e.g. while our answers are backpressured); frames already read wait.
    public func pauseReading() {
        guard !readingPaused else { return }
        readingPaused = true
        channel?.pauseReading()
    }

    public func resumeReading() {
        guard readingPaused else { return }
        readingPaused = false
        channel?.resumeReading()
        if parser.bufferedByteCount > 0 && !processing {
            // Not from inside the caller's callback: deliver on the next loop turn. Held strongly (no weak
            // reference anywhere keeps the session's reference counts on Swift's fast path, which every fan-out
            // write takes); `processInput` does nothing once the connection closed.
            loop.executeInLoop { self.processInput() }
        }
    }

    private func sendData(_ frame: [UInt8]) -> WebSocketSendResult {
        let result = write(frame)
        if result != .dropped { configuration.metrics?.messagesSent.increment() }
        return result
    }

    /// Hands a frame to the connection, or queues it behind earlier ones; enforces the outgoing bound.
    private func write(_ frame: [UInt8]) -> WebSocketSendResult {
        guard let channel else { return .dropped }
        if queued.isEmpty && !channelBackpressured {
            if channel.write(frame) { return .accepted }
            // The write may have found the socket dead and closed it.
            guard self.channel != nil else { return .dropped }
            channelBackpressured = true
        } else {
            queued.append(contentsOf: frame)
        }
        if queued.count + channel.bufferedOutputBytes > configuration.maxBufferedOutgoingBytes {
            outgoingOverflowed()
            return .dropped
        }
        writableWanted = true
        return .backpressured
    }

    /// Pings and pongs count against the bound (a client that sends pings and never reads must not grow the
    /// queue); a Close does not, since the Close after an overflow must get out and nothing can follow it.
    private func writeControl(_ frame: [UInt8], bounded: Bool = true) {
        guard let channel else { return }
        if queued.isEmpty && !channelBackpressured {
            if !channel.write(frame) && self.channel != nil { channelBackpressured = true }
            return
        }
        queued.append(contentsOf: frame)
        if bounded && queued.count + channel.bufferedOutputBytes > configuration.maxBufferedOutgoingBytes {
            outgoingOverflowed()
        }
    }

    private func outgoingOverflowed() {
        // The peer is not reading: forget what it has not got, so the Close is next on the wire.
        queued = []
        writableWanted = false
        context.logger?.debug("websocket outgoing queue overflow", ["remote": .string(context.remoteAddress)])
        run(machine.outgoingQueueOverflowed(now: .now()))
        updateTimer()
    }

    // MARK: Driver (called by WebSocketChannelHandler on the loop)

    func channelActive(_ channel: ByteChannel, initialBytes: [UInt8]) {
        self.channel = channel
        configuration.metrics?.openSessions.add(1)
        handler?.sessionOpened(self)
        guard !finished else { return }
        if !initialBytes.isEmpty { parser.append(contentsOf: initialBytes) }
        processInput()
    }

    func channelRead(_ bytes: UnsafeRawBufferPointer) {
        guard channel != nil else { return }
        parser.append(bytes)
        processInput()
    }

    func channelWritable() {
        channelBackpressured = false
        guard let channel else { return }
        if !queued.isEmpty {
            let bytes = queued
            queued = []
            if !channel.write(bytes) {
                if self.channel != nil { channelBackpressured = true }
                return
            }
        }
        if writableWanted && machine.canSendData {
            writableWanted = false
            handler?.sessionWritable(self)
        }
    }

    func serverShuttingDown() {
        guard channel != nil else { return }
        run(machine.closeRequested(code: .goingAway, reason: "server shutting down", now: .now()))
        updateTimer()
    }

    func channelClosed() {
        guard !finished else { return }
        finished = true
        channel = nil
        cancelTimer()
        machine.transportClosed()
        queued = []
        parser = WebSocketFrameParser(role: .server, maxFramePayloadBytes: configuration.maxFrameBytes)
        let (code, reason) = machine.closeCodeForApplication
        if let metrics = configuration.metrics {
            metrics.openSessions.add(-1)
            metrics.closes.labels(String(code.rawValue)).increment()
        }
        // Drop the handler before calling it: it usually holds the session, and the cycle ends here.
        let handler = self.handler
        self.handler = nil
        handler?.sessionClosed(self, code: code, reason: reason)
    }

    // MARK: Input

    private func processInput() {
        guard !processing else { return } // a handler callback re-entered; the outer loop continues
        processing = true
        defer { processing = false }
        let now = Instant.now()
        while channel != nil && !readingPaused && !machine.isClosed {
            let actions: WebSocketActions
            do {
                guard let frame = try parser.next() else { break }
                actions = machine.frameReceived(frame, now: now)
            } catch {
                context.logger?.debug(
                    "websocket protocol error",
                    [
                        "code": .int(Int(error.closeCode.rawValue)),
                        "reason": .string(error.reason),
                        "remote": .string(context.remoteAddress),
                    ])
                actions = machine.parseFailed(error, now: now)
            }
            run(actions)
        }
        updateTimer()
    }

    private func run(_ actions: WebSocketActions) {
        for action in actions {
            guard !finished else { return }
            switch action {
            case .deliverText(let text):
                configuration.metrics?.messagesReceived.increment()
                handler?.textReceived(text, session: self)
            case .deliverBinary(let bytes):
                configuration.metrics?.messagesReceived.increment()
                handler?.binaryReceived(bytes, session: self)
            case .sendPing(let payload):
                writeControl(WebSocketFrameEncoder.server.encode(opcode: .ping, payload: payload))
            case .sendPong(let payload):
                writeControl(WebSocketFrameEncoder.server.encode(opcode: .pong, payload: payload))
            case .sendClose(let code, let reason):
                writeControl(WebSocketFrameEncoder.server.encodeClose(code: code, reason: reason), bounded: false)
            case .closeTransport:
                channel?.close(flush: true)
            case .dropTransport:
                channel?.close(flush: false)
            }
        }
    }

    // MARK: Timer

    /// One timer per session, at the state machine's next deadline. Frames that push the deadline later do
    /// not move it: the timer fires, finds nothing to do, and is set again (no per-frame timer churn).
    private func updateTimer() {
        guard channel != nil, let deadline = machine.nextDeadline else {
            cancelTimer()
            return
        }
        if let timerDeadline, timerDeadline <= deadline { return }
        cancelTimer()
        timerDeadline = deadline
        // Strong: the timer is cancelled when the connection closes, which ends the cycle (see `resumeReading`).
        timer = loop.scheduleTimer(after: deadline.since(.now())) { self.timerFired() }
    }

    private func timerFired() {
        timer = nil
        timerDeadline = nil
        guard channel != nil else { return }
        run(machine.timerFired(now: .now()))
        updateTimer()
    }

    private func cancelTimer() {
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        timerDeadline = nil
    }
}

@available(*, unavailable)
extension WebSocketSession: Sendable {}

/// What the HTTP connection holds after the upgrade: forwards the byte stream to its session. A separate
/// object so the session's public API does not expose the `ByteStreamHandler` methods.
final class WebSocketChannelHandler: ByteStreamHandler {
    let session: WebSocketSession

    init(session: WebSocketSession) { self.session = session }

    func channelActive(_ channel: ByteChannel, initialBytes: [UInt8]) {
        session.channelActive(channel, initialBytes: initialBytes)
    }
    func channelRead(_ bytes: UnsafeRawBufferPointer) { session.channelRead(bytes) }
    func channelWritable() { session.channelWritable() }
    func channelClosed() { session.channelClosed() }
    func serverShuttingDown() { session.serverShuttingDown() }
}

/// A session as other threads see it (fan-out from another loop, a registry of online devices): every
/// call hops to the session's loop, or runs at once when already there.
public struct WebSocketSessionHandle: @unchecked Sendable, Hashable {
    // Only dereferenced on `loop` (enforced by `perform`).
    private let session: WebSocketSession
    public let loop: EventLoop

    init(session: WebSocketSession) {
        self.session = session
        self.loop = session.loop
    }

    /// Runs `body` with the session on its loop.
    public func perform(_ body: @escaping @Sendable (WebSocketSession) -> Void) {
        if loop.inEventLoop {
            body(session)
        } else {
            let handle = self
            loop.execute { body(handle.session) }
        }
    }

    public func send(text: String) { perform { $0.send(text: text) } }
    public func send(encodedFrame: [UInt8]) { perform { $0.send(encodedFrame: encodedFrame) } }
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        perform { $0.close(code: code, reason: reason) }
    }
    public func probe(within timeout: Duration) { perform { $0.probe(within: timeout) } }

    /// Sends one encoded frame to many sessions with one hop per event loop (not one per session): the fan-out
    /// path of a group message.
    public static func broadcast(encodedFrame: [UInt8], to handles: [WebSocketSessionHandle]) {
        guard !handles.isEmpty else { return }
        if handles.count == 1 {
            handles[0].send(encodedFrame: encodedFrame)
            return
        }
        var byLoop: [ObjectIdentifier: (loop: EventLoop, sessions: [WebSocketSessionHandle])] = [:]
        for handle in handles {
            byLoop[ObjectIdentifier(handle.loop), default: (handle.loop, [])].sessions.append(handle)
        }
        for (_, group) in byLoop {
            let sessions = group.sessions
            let send: @Sendable () -> Void = {
                for handle in sessions { handle.session.send(encodedFrame: encodedFrame) }
            }
            if group.loop.inEventLoop { send() } else { group.loop.execute(send) }
        }
    }

    /// Sends each session its own encoded frame with one hop per event loop and no closure per session: the path of
    /// per-subscriber batches (presence).
    public static func send(_ frames: [(handle: WebSocketSessionHandle, frame: [UInt8])]) {
        var byLoop: [ObjectIdentifier: (loop: EventLoop, frames: [(handle: WebSocketSessionHandle, frame: [UInt8])])] =
            [:]
        for entry in frames {
            byLoop[ObjectIdentifier(entry.handle.loop), default: (entry.handle.loop, [])].frames.append(entry)
        }
        for (_, group) in byLoop {
            let frames = group.frames
            let send: @Sendable () -> Void = {
                for entry in frames { entry.handle.session.send(encodedFrame: entry.frame) }
            }
            if group.loop.inEventLoop { send() } else { group.loop.execute(send) }
        }
    }

    public static func == (lhs: WebSocketSessionHandle, rhs: WebSocketSessionHandle) -> Bool {
        lhs.session === rhs.session
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(session)) }
}

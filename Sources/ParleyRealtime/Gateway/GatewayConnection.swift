import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyNet
import ParleyWebSocket

/// One device's WebSocket: registers it as online, says hello, answers its request frames one at a time in
/// order (a device's sends are stored in the order it sent them) from when other instances' events for the user
/// reach this one (the relay says when), and ends it when the IM token expires.
///
/// Loop-confined: the WebSocket layer calls it on the session's loop, and the task answering requests prefers
/// that loop as its executor, so its state is only touched there (hence `@unchecked Sendable`).
final class GatewayConnection: WebSocketSessionHandler, @unchecked Sendable {
    let gateway: Gateway
    let principal: Principal
    let tokenExpiresAt: Date
    private var entry: GatewayEntry?
    /// Strong (a weak reference would put every retain of the session on Swift's slow path); let go on close.
    private var session: WebSocketSession?
    private var pending: PendingRequests
    private var processing = false
    /// Requests are answered from when the relay delivers the user's events here: a client syncs after the hello,
    /// and a sync answered before could miss an event committed after it and relayed before the relay had the user.
    private var answering = false
    private var expiryTimer: EventLoop.TimerID?
    private var typing: TypingLimiter
    private let rooms: ConnectionRooms
    private var closed = false

    init(gateway: Gateway, principal: Principal, tokenExpiresAt: Date) {
        self.gateway = gateway
        self.principal = principal
        self.tokenExpiresAt = tokenExpiresAt
        typing = TypingLimiter(perSecond: gateway.configuration.typingPerSecond)
        rooms = ConnectionRooms(limit: gateway.configuration.rooms.maxRoomsPerConnection)
        pending = PendingRequests(
            maxCount: gateway.configuration.maxPendingRequests,
            maxBytes: gateway.configuration.maxPendingRequestBytes)
    }

    func sessionOpened(_ session: WebSocketSession) {
        self.session = session
        let id = gateway.newConnectionID()
        let entry = GatewayEntry(
            id: id, appId: principal.appId, userId: principal.userId,
            sessionId: principal.sessionId, handle: session.handle, origin: gateway.connectionOrigin(principal, id))
        self.entry = entry
        // Only with rooms: the room state holds the session until it closes, which the rooms see.
        if gateway.rooms != nil { rooms.opened(entry, session: session) }
        // A device reconnecting again and again (a flaky network) leaves sockets that are dead but not yet noticed:
        // past the probe limit its oldest ones must answer a ping at once or go, not the new one it is about to use;
        // past the hard limit they go, alive or not.
        let configuration = gateway.configuration
        let admission = gateway.registry.add(
            entry, probeBeyond: configuration.probeConnectionsPerSession,
            maxPerSession: configuration.maxConnectionsPerSession)
        for replaced in admission.replaced {
            replaced.handle.close(
                code: .replacedByNewerConnection, reason: "replaced by a newer connection of this session")
        }
        for doubted in admission.doubted { doubted.handle.probe(within: configuration.socketProbeTimeout) }
        gateway.presence?.connected(
            .init(
                connectionId: entry.id, appId: entry.appId, userId: entry.userId,
                sessionId: entry.sessionId))
        gateway.presenceHub?.opened(entry)
        session.send(
            encodedFrame: ServerFrame.encoded(
                type: "hello",
                json: .object(
                    JSONObject([
                        ("serverTime", .string(ISO8601.format(Date()))),
                        ("userId", .string(principal.userId)), ("sessionId", .string(principal.sessionId)),
                        (
                            "heartbeatSeconds",
                            .number(
                                JSONNumber(Int(gateway.configuration.webSocket.pingInterval?.components.seconds ?? 0)))
                        ),
                        ("tokenExpiresAt", .string(ISO8601.format(tokenExpiresAt))),
                    ]))))
        let remaining = max(0, tokenExpiresAt.timeIntervalSinceNow)
        expiryTimer = session.loop.scheduleTimer(after: .milliseconds(Int64(remaining * 1000))) { [weak self] in
            self?.tokenExpired()
        }
        let loop = session.loop
        gateway.relay.whenReceiving(appId: entry.appId, userId: entry.userId) { [self] in
            if loop.inEventLoop { startAnswering() } else { loop.execute { self.startAnswering() } }
        }
    }

    private func startAnswering() {
        guard !closed, !answering, let session else { return }
        answering = true
        if !processing && !pending.isEmpty { startProcessing(on: session.loop) }
    }

    func textReceived(_ text: String, session: WebSocketSession) {
        guard !closed else { return }
        switch pending.received(text) {
        case .queued(let pauseReading):
            if pauseReading { session.pauseReading() }
            if !processing && answering { startProcessing(on: session.loop) }
        case .overflow:
            closed = true
            pending.removeAll()
            session.close(
                code: .tooManyPendingRequests,
                reason: "too many requests waiting for their answers: wait for answers before sending more")
        }
    }

    /// One task per burst of requests, on the session's loop; ends when the queue is empty.
    private func startProcessing(on loop: EventLoop) {
        processing = true
        Task(executorPreference: loop) {
            while !self.closed, let text = self.pending.takeNext() {
                let answer: [UInt8]
                switch ClientFrame.parse(text) {
                case .success(let frame):
                    answer = await self.gateway.answer(
                        frame, principal: self.principal, connection: self.entry, connectionRooms: self.rooms,
                        typing: &self.typing)
                case .failure(let failure):
                    answer = ServerFrame.error(reqId: failure.reqId, failure.error)
                }
                self.session?.send(encodedFrame: answer)
                if self.pending.answered() { self.session?.resumeReading() }
            }
            self.processing = false
        }
    }

    private func tokenExpired() {
        expiryTimer = nil
        guard let session, !closed else { return }
        session.send(
            encodedFrame: ServerFrame.encoded(
                type: "token_expired",
                json: .object(
                    JSONObject([
                        ("reason", "the IM token expired: get a new one and reconnect")
                    ]))))
        session.close(code: .tokenExpired, reason: "token expired")
    }

    func sessionClosed(_ session: WebSocketSession, code: WebSocketCloseCode, reason: String) {
        closed = true
        pending.removeAll()
        if let timer = expiryTimer { session.loop.cancelTimer(timer) }
        expiryTimer = nil
        gateway.rooms?.closed(rooms)
        if let entry {
            gateway.registry.remove(entry)
            gateway.presence?.disconnected(connectionId: entry.id)
            gateway.presenceHub?.closed(entry)
        }
        entry = nil
        self.session = nil
    }
}

import Glibc
import ParleyNet

/// Everything of a run that lives on one event loop: its connections, its read buffer, the queue of connections
/// still to open, and the latency samples it recorded.
///
/// Loop-confined (hence `@unchecked Sendable`): while the group runs only the loop's thread touches it, through
/// closures the main thread hands over with `loop.execute`; the main thread reads it again only after
/// `EventLoopGroup.shutdown()` has joined that thread.
final class LoopContext: ClientConnectionDelegate, @unchecked Sendable {
    let loop: EventLoop
    let counters: RunCounters
    let readBuffer: UnsafeMutableRawBufferPointer

    /// A connection still to open.
    struct Opening: Sendable {
        var index: Int32
        var token: String
        var server: ServerEndpoint
    }

    private(set) var connections: [ClientConnection] = []
    private var queue: [Opening] = []
    private var queued = 0
    private var inFlight = 0
    private var maxInFlight = 1
    /// Once set, connections that end are expected to.
    private var closing = false
    /// Measurement window (receive time, monotonic ns).
    private var windowStart = Int64.max
    private var windowEnd = Int64.max
    private var senders: [ClientConnection] = []
    /// Requests of connections without a sender still to send, one per answer (`sendToEach`).
    private var requestQueue: [() -> Void] = []

    /// Send-to-receive times (ns) of the deliveries received inside the window.
    private(set) var latencies: [Int64] = []
    /// Send-to-ack times (ns) of the answers received inside the window: the stored part of the latency.
    private(set) var ackLatencies: [Int64] = []
    /// `heartbeatSeconds` of the first `hello`.
    private(set) var heartbeatSeconds: Int?

    init(loop: EventLoop, counters: RunCounters) {
        self.loop = loop
        self.counters = counters
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit { readBuffer.deallocate() }

    // MARK: Opening (loop thread)

    /// Opens a connection per entry, at most `maxInFlight` handshakes at a time (a connection counts until its
    /// `hello`), so that neither the server's accept queue nor its token checks are flooded.
    func open(_ entries: [Opening], maxInFlight: Int) {
        queue = entries
        queued = 0
        self.maxInFlight = max(1, maxInFlight)
        connections.reserveCapacity(entries.count)
        startQueued()
    }

    private func startQueued() {
        while inFlight < maxInFlight && queued < queue.count {
            let entry = queue[queued]
            queue[queued].token = "" // the token is in the request now; do not keep 10,000 of them
            queued += 1
            if queued == queue.count {
                queue = []
                queued = 0
            }
            inFlight += 1
            let connection = ClientConnection(index: entry.index, loop: loop, delegate: self)
            connections.append(connection)
            connection.connect(
                to: entry.server.address, host: entry.server.hostHeader,
                headers: [("Authorization", "Bearer \(entry.token)")])
        }
    }

    private func handshakeDone() {
        inFlight -= 1
        startQueued()
    }

    // MARK: ClientConnectionDelegate

    func connectionOpened(_ connection: ClientConnection) {
        counters.opened.bump()
    }

    func connection(_ connection: ClientConnection, receivedText payload: [UInt8]) {
        switch ServerFrameScanner.scan(payload) {
        case .message(let sentAt?):
            let now = MonotonicClock.now()
            counters.delivered.bump()
            connection.messagesReceived += 1
            if now >= windowStart && now < windowEnd {
                counters.windowDeliveries.bump()
                latencies.append(now - sentAt)
            }
        case .message(nil):
            counters.foreignMessages.bump()
        case .ack(let reqId):
            answered(connection, reqId: reqId, error: nil)
        case .error(let code, let message):
            answered(connection, reqId: nil, error: "error \(code): \(message)")
        case .hello(let heartbeat):
            if heartbeatSeconds == nil { heartbeatSeconds = heartbeat }
            if !connection.helloReceived {
                connection.helloReceived = true
                counters.helloed.bump()
                handshakeDone()
            }
        case .presence(let entries):
            counters.presenceFrames.bump()
            counters.presenceEntries.bump(by: entries)
        case .other:
            counters.otherFrames.bump()
        case .malformed:
            counters.note("malformed server frame: \(String(decoding: payload.prefix(120), as: UTF8.self))")
            counters.otherFrames.bump()
        }
    }

    func connectionEnded(_ connection: ClientConnection, _ ending: ConnectionEnding) {
        counters.ended.bump()
        if !connection.helloReceived {
            counters.setupFailures.bump()
            counters.note("opening: \(ending.summary)")
            if !closing { handshakeDone() }
        } else if !closing {
            counters.unexpectedEnds.bump()
            counters.note("ended during the run: \(ending.summary)")
        }
    }

    // MARK: Load (loop thread)

    /// Gives `connection index` a sender; false when that connection is not on this loop or not open.
    func attach(_ sender: Sender, to index: Int32) -> Bool {
        guard let connection = connections.first(where: { $0.index == index }), connection.state == .open else {
            return false
        }
        connection.sender = sender
        senders.append(connection)
        return true
    }

    /// Sends from `begin` until `end` (monotonic ns); deliveries count from `windowStart` to `end`.
    func startLoad(begin: Int64, windowStart: Int64, end: Int64) {
        self.windowStart = windowStart
        windowEnd = end
        var paced = false
        for connection in senders {
            guard let sender = connection.sender else { continue }
            sender.begin = begin
            sender.end = end
            paced = paced || sender.ratePerNanosecond > 0
        }
        let startDelay = max(0, begin - MonotonicClock.now())
        loop.scheduleTimer(after: .nanoseconds(startDelay)) { [self] in
            fillAll()
            // Paced senders are checked every millisecond; unpaced ones refill on each answer.
            if paced {
                loop.scheduleRepeating(every: .milliseconds(1)) { [self] in
                    fillAll()
                    return MonotonicClock.now() < end
                }
            }
        }
    }

    private func fillAll() {
        for connection in senders { fill(connection) }
    }

    private func fill(_ connection: ClientConnection) {
        guard let sender = connection.sender else { return }
        while connection.state == .open, sender.mayIssue(now: MonotonicClock.now()) {
            connection.send(text: sender.nextFrame(sentAt: MonotonicClock.now()))
            counters.sent.bump()
        }
    }

    private func answered(_ connection: ClientConnection, reqId: Int64?, error: String?) {
        guard let sender = connection.sender else {
            // Not a sender: the idle check's `ping` request.
            if let error {
                counters.appRequestErrors.bump()
                counters.note("request: \(error)")
            } else {
                counters.appPingAcks.bump()
            }
            sendQueuedRequest()
            return
        }
        let (inOrder, sentAt) = sender.answered(reqId: reqId)
        if let error {
            counters.errors.bump()
            counters.note(error)
        } else {
            if !inOrder { counters.ackMismatches.bump() }
            sender.acked += 1
            counters.acked.bump()
            counters.expectedDeliveries.bump(by: sender.recipients)
            let now = MonotonicClock.now()
            if now >= windowStart && now < windowEnd {
                counters.windowAcks.bump()
                ackLatencies.append(now - sentAt)
            }
        }
        fill(connection)
    }

    // MARK: Idle checks and the end (loop thread)

    /// An application-level `ping` request on every open connection: its `ack` proves the connection still
    /// works end to end after the idle period.
    func sendPingRequests() {
        sendToAll(Array(#"{"type":"ping","reqId":"p"}"#.utf8))
    }

    /// One request frame (with a non-numeric `reqId`) on every open connection that does not send; its answers
    /// count as `appPingAcks` (errors are noted).
    func sendToAll(_ frame: [UInt8]) {
        for connection in connections where connection.state == .open && connection.sender == nil {
            connection.send(text: frame)
        }
    }

    /// Sends each open connection the request `frame` makes for its index (presence subscriptions), at most
    /// `maxInFlight` unanswered at a time: the server answers each with a database read, and a flood of them would
    /// only queue for its pool.
    func sendToEach(maxInFlight: Int, _ frame: @escaping (Int32) -> [UInt8]) {
        requestQueue = connections.filter { $0.state == .open }.map { connection in
            { connection.send(text: frame(connection.index)) }
        }
        requestQueue.reverse()
        for _ in 0..<maxInFlight { sendQueuedRequest() }
    }

    private func sendQueuedRequest() {
        requestQueue.popLast()?()
    }

    /// One `presence_set` per connection per `period` (ns), spread evenly over the period, from `start` until
    /// `end`, alternating `away` and `online`; counts them in `sent`.
    func startPresenceChanges(period: Int64, start: Int64, end: Int64) {
        // In random order: in index order a user's ring neighbours would change one after the other, and their
        // subscribers' events would coalesce far better than real changes do.
        let open = connections.filter { $0.state == .open }.shuffled()
        guard !open.isEmpty else { return }
        let spacing = max(1, period / Int64(open.count))
        let frames = ["away", "online"].map { Array(#"{"type":"presence_set","data":{"status":"\#($0)"}}"#.utf8) }
        var issued: Int64 = 0
        loop.scheduleRepeating(every: .milliseconds(5)) { [self] in
            let now = MonotonicClock.now()
            while start + issued * spacing <= min(now, end) {
                let connection = open[Int(issued % Int64(open.count))]
                let round = Int(issued / Int64(open.count))
                if connection.state == .open { connection.send(text: frames[round % 2]) }
                counters.sent.bump()
                issued += 1
            }
            return now < end
        }
    }

    /// Starts the closing handshake everywhere.
    func closeAll() {
        closing = true
        queue = []
        for connection in connections { connection.close() }
    }

    /// Drops whatever is still open.
    func abortAll() {
        closing = true
        for connection in connections { connection.abort() }
    }

    /// Heartbeat figures: connections that saw no ping, fewest and total pings.
    func pingFigures() -> (withoutPing: Int, fewest: Int, total: Int) {
        var without = 0
        var fewest = Int.max
        var total = 0
        for connection in connections where connection.helloReceived {
            let pings = Int(connection.pingsReceived)
            if pings == 0 { without += 1 }
            fewest = min(fewest, pings)
            total += pings
        }
        return (without, fewest == .max ? 0 : fewest, total)
    }
}

import Glibc
import ParleyNet
import Synchronization

/// A set of client connections spread over one event loop per core (connection `i` lives on loop
/// `i % loops`, and goes to the server it was opened with), and the steps of a run: open them all, put load on
/// some of them, close them.
/// The main thread drives the steps and waits by polling the shared counters.
final class Fleet {
    let group: EventLoopGroup
    let contexts: [LoopContext]
    let counters = RunCounters()
    private(set) var size = 0

    init(loops: Int) throws(BenchError) {
        do {
            group = try EventLoopGroup(threads: loops)
        } catch {
            throw BenchError("event loops: \(error)")
        }
        let counters = counters
        contexts = group.loops.map { LoopContext(loop: $0, counters: counters) }
    }

    /// Opens one connection per token, all to `server`.
    func open(tokens: [String], to server: ServerEndpoint, maxInFlight: Int, timeout: Double) throws(BenchError) {
        try open(tokens.map { (token: $0, server: server) }, maxInFlight: maxInFlight, timeout: timeout)
    }

    /// Opens connection `i` with `connections[i].token` to `connections[i].server` and waits for every `hello`.
    /// Fails, naming the reasons, when any connection could not be opened or `timeout` passed.
    func open(_ connections: [(token: String, server: ServerEndpoint)], maxInFlight: Int, timeout: Double)
        throws(BenchError)
    {
        let total = connections.count
        size = total
        let perLoop = max(1, maxInFlight / contexts.count)
        for (position, context) in contexts.enumerated() {
            let entries = stride(from: position, to: connections.count, by: contexts.count).map {
                LoopContext.Opening(index: Int32($0), token: connections[$0].token, server: connections[$0].server)
            }
            context.loop.execute { context.open(entries, maxInFlight: perLoop) }
        }
        let started = MonotonicClock.now()
        var lastReport = started
        let done = wait(timeout: timeout) {
            let now = MonotonicClock.now()
            if now - lastReport > 5_000_000_000 {
                lastReport = now
                Console.log("  \(counters.helloed.value) of \(total) connections open")
            }
            return counters.helloed.value + counters.setupFailures.value >= total
        }
        let seconds = MonotonicClock.seconds(since: started)
        Console.log(
            "opened \(counters.helloed.value) of \(total) WebSockets in "
                + "\(Console.format(seconds, decimals: 1)) s")
        if counters.setupFailures.value > 0 || !done {
            throw BenchError(
                "\(total - counters.helloed.value) of \(total) connections did not open"
                    + (done ? "" : " within \(Int(timeout)) s") + ": \(counters.reasonSummary)")
        }
    }

    /// Attaches senders (by connection index) on their loops.
    func attach(_ senders: [(index: Int, sender: Sender)]) throws(BenchError) {
        let attached = AttachCount()
        for (index, sender) in senders {
            let context = contexts[index % contexts.count]
            context.loop.execute {
                if context.attach(sender, to: Int32(index)) { attached.count.bump() }
            }
        }
        guard wait(timeout: 10, { attached.count.value == senders.count }) else {
            throw BenchError("only \(attached.count.value) of \(senders.count) senders could be attached")
        }
    }

    /// Runs `body` on every loop and returns the results in loop order.
    func collect<T: Sendable>(_ body: @escaping @Sendable (LoopContext) -> T) -> [T] {
        let results = Mutex<[T?]>(Array(repeating: nil, count: contexts.count))
        for (position, context) in contexts.enumerated() {
            context.loop.execute {
                let value = body(context)
                results.withLock { $0[position] = value }
            }
        }
        _ = wait(timeout: 30) { results.withLock { $0.allSatisfy { $0 != nil } } }
        return results.withLock { $0.compactMap { $0 } }
    }

    /// Starts sending on every loop at the same instant.
    func startLoad(begin: Int64, windowStart: Int64, end: Int64) {
        for context in contexts {
            context.loop.execute { context.startLoad(begin: begin, windowStart: windowStart, end: end) }
        }
    }

    /// Closing handshake on every connection, waiting up to `timeout` for the server's answers; the rest is
    /// dropped.
    func close(timeout: Double) {
        for context in contexts { context.loop.execute { context.closeAll() } }
        let closed = wait(timeout: timeout) { counters.ended.value >= size }
        if !closed {
            Console.log(
                "\(size - counters.ended.value) connections did not finish the closing handshake in "
                    + "\(Int(timeout)) s; dropping them")
        }
        for context in contexts { context.loop.execute { context.abortAll() } }
        _ = wait(timeout: 5) { counters.ended.value >= size }
    }

    /// Stops the loops; afterwards the contexts may be read from this thread.
    func shutdown() {
        group.shutdown()
    }

    /// Every delivery latency sample of the window, from all loops (after `shutdown`).
    func latencies() -> [Int64] {
        contexts.flatMap(\.latencies)
    }

    /// Every send-to-ack sample of the window (after `shutdown`).
    func ackLatencies() -> [Int64] {
        contexts.flatMap(\.ackLatencies)
    }

    /// Polls `condition` every 10 ms until it holds (true) or `timeout` seconds pass (false).
    func wait(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = MonotonicClock.now() + Int64(timeout * 1e9)
        while !condition() {
            if MonotonicClock.now() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }
}

/// How many senders their loops have attached.
private final class AttachCount: Sendable {
    let count = Atomic<Int>(0)
}

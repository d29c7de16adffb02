import Glibc
import Synchronization

/// A fixed set of event loops, one thread each (by default one per core).
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    private let nextIndex = Atomic<Int>(0)
    private let threads = Mutex<[pthread_t]>([])

    public init(threads count: Int = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) throws(SocketError) {
        var loops: [EventLoop] = []
        for i in 0..<max(1, count) { loops.append(try EventLoop(index: i)) }
        self.loops = loops
        for loop in loops {
            let box = Unmanaged.passRetained(LoopBox(loop: loop)).toOpaque()
            var thread = pthread_t()
            let rc = pthread_create(
                &thread, nil,
                { raw in
                    let box = Unmanaged<LoopBox>.fromOpaque(raw!).takeRetainedValue()
                    box.loop.run()
                    return nil
                }, box)
            precondition(rc == 0, "pthread_create failed: \(rc)")
            threads.withLock { $0.append(thread) }
        }
    }

    /// Round-robin choice, for work that is not tied to a connection.
    public func next() -> EventLoop {
        loops[nextIndex.add(1, ordering: .relaxed).oldValue % loops.count]
    }

    /// The loop the caller runs on, or the next one.
    public func currentOrNext() -> EventLoop {
        if let current = EventLoop.current, loops.contains(where: { $0 === current }) { return current }
        return next()
    }

    /// Stops every loop and joins its thread. Must not be called from a loop thread.
    public func shutdown() {
        for loop in loops { loop.stop() }
        let joined = threads.withLock { list -> [pthread_t] in
            let all = list
            list.removeAll()
            return all
        }
        for thread in joined { pthread_join(thread, nil) }
    }
}

private final class LoopBox {
    let loop: EventLoop
    init(loop: EventLoop) { self.loop = loop }
}

import CParleyLinux
import Glibc
import Synchronization

/// Readiness a handler asks to be told about.
public struct IOEvents: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let readable = IOEvents(rawValue: 1)
    public static let writable = IOEvents(rawValue: 2)
    /// Do not report the peer shutting down its sending side (EPOLLRDHUP, watched otherwise even while not reading,
    /// so a paused handler learns its peer left). For a handler that already read the EOF and still has an answer
    /// to write: level-triggered, the half-close would wake the loop on every wait. A reset still comes as
    /// `hangup` (EPOLLHUP/EPOLLERR).
    public static let ignoringPeerHalfClose = IOEvents(rawValue: 4)
}

/// Something that owns a file descriptor registered with an event loop. Called on the loop thread only.
public protocol IOHandler: AnyObject {
    /// `hangup`: the peer reset or closed the connection, or half-closed it (unless `.ignoringPeerHalfClose`).
    func ioReady(readable: Bool, writable: Bool, hangup: Bool)
}

/// One thread, one epoll instance. Every socket belongs to exactly one loop and is touched only on
/// that loop's thread, so connection state needs no locks. The loop is also a `TaskExecutor`: request
/// handlers run as tasks preferring the loop that owns their socket, so an `await` does not hop threads.
public final class EventLoop: @unchecked Sendable, TaskExecutor {
    public let index: Int
    private let epollFD: Int32
    private let wakeFD: Int32
    private let inbox = Mutex<[Work]>([])
    private let wakeupArmed = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let threadIdentity = Atomic<UInt>(0)

    // Loop-confined state: touched only on the loop thread.
    private var local: [Work] = []
    /// The time this loop last woke up (taken once per `epoll_wait` return): for deadlines and activity stamps
    /// that need milliseconds, not a clock read per operation. Read on the loop's thread only.
    public private(set) var wakeTime = Instant.now()
    private var handlers: [IOHandler?] = []
    private var timers = TimerQueue()
    /// This loop's `LoopLocal` instances.
    private let localSlots = LoopLocalSlots()

    // Closures in the inbox come from `execute` and are Sendable; `local` is loop-confined.
    enum Work: @unchecked Sendable {
        case closure(() -> Void)
        case job(UnownedJob)
    }

    public init(index: Int) throws(SocketError) {
        self.index = index
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        if epollFD < 0 { throw SocketError(operation: "epoll_create1", errno: errno) }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        if wakeFD < 0 { throw SocketError(operation: "eventfd", errno: errno) }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeFD
        epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)
    }

    deinit {
        close(wakeFD)
        close(epollFD)
    }

    // MARK: Thread identity

    /// True when called on this loop's thread.
    public var inEventLoop: Bool {
        threadIdentity.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self()))
    }

    /// The loop whose thread is running the caller, if any.
    public static var current: EventLoop? {
        guard let raw = pthread_getspecific(currentLoopKey) else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(raw).takeUnretainedValue()
    }

    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(inEventLoop, "must run on event loop \(index)", file: file, line: line)
    }

    // MARK: Scheduling work

    /// Runs `work` on the loop thread: at once in order if already there, otherwise after a wake-up.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        enqueue(.closure(work))
    }

    /// Like `execute`, for callers already on the loop thread with a non-Sendable closure.
    public func executeInLoop(_ work: @escaping () -> Void) {
        preconditionInEventLoop()
        local.append(.closure(work))
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        enqueue(.job(UnownedJob(job)))
    }

    private func enqueue(_ work: Work) {
        if inEventLoop {
            local.append(work)
            return
        }
        inbox.withLock { $0.append(work) }
        if !wakeupArmed.exchange(true, ordering: .acquiringAndReleasing) {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
    }

    /// Runs `work` on the loop and returns its result to the caller, wherever it runs.
    public func submit<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        if inEventLoop { return try work() }
        return try await withCheckedThrowingContinuation { continuation in
            execute { continuation.resume(with: Result { try work() }) }
        }
    }

    // MARK: Timers (loop thread only)

    public struct TimerID: Sendable, Hashable { let raw: UInt64 }

    @discardableResult
    public func scheduleTimer(after delay: Duration, _ work: @escaping () -> Void) -> TimerID {
        preconditionInEventLoop()
        return TimerID(raw: timers.schedule(at: .now() + delay, work))
    }

    public func cancelTimer(_ id: TimerID) {
        preconditionInEventLoop()
        timers.cancel(id.raw)
    }

    /// Calls `work` every `interval` until it returns false.
    /// The timer holds the loop strongly (docs/ARCHITECTURE.md, "No weak references to hot objects"); `run()` drops
    /// its timers when it returns, which ends the cycle.
    public func scheduleRepeating(every interval: Duration, _ work: @escaping () -> Bool) {
        scheduleTimer(after: interval) { [self] in
            guard work() else { return }
            self.scheduleRepeating(every: interval, work)
        }
    }

    // MARK: Descriptors (loop thread only)

    public func register(fd: Int32, events: IOEvents, handler: IOHandler) throws(SocketError) {
        preconditionInEventLoop()
        var event = epollEvent(fd: fd, events: events)
        if epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) != 0 {
            throw SocketError(operation: "epoll_ctl(ADD)", errno: errno)
        }
        let slot = Int(fd)
        if slot >= handlers.count {
            handlers.append(contentsOf: repeatElement(nil, count: slot - handlers.count + 1 + handlers.count / 2))
        }
        handlers[slot] = handler
    }

    public func modify(fd: Int32, events: IOEvents) {
        preconditionInEventLoop()
        var event = epollEvent(fd: fd, events: events)
        epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
    }

    /// Stops watching `fd`; the caller closes it afterwards.
    public func unregister(fd: Int32) {
        preconditionInEventLoop()
        epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        if Int(fd) < handlers.count { handlers[Int(fd)] = nil }
    }

    private func epollEvent(fd: Int32, events: IOEvents) -> epoll_event {
        var event = epoll_event()
        var mask = events.contains(.ignoringPeerHalfClose) ? 0 : EPOLLRDHUP.rawValue
        if events.contains(.readable) { mask |= EPOLLIN.rawValue }
        if events.contains(.writable) { mask |= EPOLLOUT.rawValue }
        event.events = mask
        event.data.fd = fd
        return event
    }

    // MARK: Running

    /// Asks the loop to return from `run()` after the current iteration.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        execute {}
    }

    /// Runs the loop on the calling thread until `stop()`.
    public func run() {
        LoopLocalSlots.withCurrent(localSlots) { runLoop() }
    }

    private func runLoop() {
        threadIdentity.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .relaxed)
        pthread_setspecific(currentLoopKey, Unmanaged.passUnretained(self).toOpaque())
        defer {
            pthread_setspecific(currentLoopKey, nil)
            threadIdentity.store(0, ordering: .relaxed)
        }
        let capacity: Int32 = 512
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(capacity))
        defer { events.deallocate() }

        while !stopRequested.load(ordering: .acquiring) {
            runQueuedWork()
            let timeout: Int32
            if !local.isEmpty {
                timeout = 0
            } else if let deadline = timers.earliest {
                let now = Instant.now()
                timeout =
                    deadline <= now
                    ? 0 : Int32(min((deadline.nanoseconds - now.nanoseconds + 999_999) / 1_000_000, 60_000))
            } else {
                timeout = 60_000
            }
            let count = epoll_wait(epollFD, events, capacity, timeout)
            if count < 0 && errno != EINTR { break }
            wakeTime = .now()
            for i in 0..<Int(max(count, 0)) {
                let event = events[i]
                let fd = event.data.fd
                if fd == wakeFD {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                    wakeupArmed.store(false, ordering: .releasing)
                    continue
                }
                guard Int(fd) < handlers.count, let handler = handlers[Int(fd)] else { continue }
                let mask = event.events
                handler.ioReady(
                    readable: mask & (EPOLLIN.rawValue | EPOLLPRI.rawValue) != 0,
                    writable: mask & EPOLLOUT.rawValue != 0,
                    hangup: mask & (EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue) != 0)
            }
            if let deadline = timers.earliest, deadline <= .now() {
                wakeTime = .now()
                for work in timers.popExpired(now: wakeTime) { work() }
            }
        }
        runQueuedWork()
        // Nothing runs them any more, and repeating ones hold this loop.
        timers = TimerQueue()
    }

    private func runQueuedWork() {
        let remote = inbox.withLock { queue -> [Work] in
            if queue.isEmpty { return [] }
            let taken = queue
            queue.removeAll(keepingCapacity: true)
            return taken
        }
        if !remote.isEmpty { local.append(contentsOf: remote) }
        // Bounded: work queued by this batch waits for the next iteration, so I/O is never starved.
        var batch = local
        local.removeAll(keepingCapacity: true)
        for item in batch {
            switch item {
            case .closure(let work): work()
            case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
        batch.removeAll()
    }
}

private let currentLoopKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()

import Synchronization

/// A snapshot of the pool: connections open or opening (`total`), leased (`inUse`), `idle`, and requests
/// queued for a connection (`waiting`).
public struct PostgresPoolStatistics: Sendable, Hashable {
    public var total: Int
    public var inUse: Int
    public var idle: Int
    public var waiting: Int

    public init(total: Int = 0, inUse: Int = 0, idle: Int = 0, waiting: Int = 0) {
        self.total = total
        self.inUse = inUse
        self.idle = idle
        self.waiting = waiting
    }
}

/// Written by one loop thread (plain stores), read by anyone: no contention on the query path.
final class PoolCounters: Sendable {
    let total = Atomic<Int>(0)
    let inUse = Atomic<Int>(0)
    let idle = Atomic<Int>(0)
    let waiting = Atomic<Int>(0)

    var snapshot: PostgresPoolStatistics {
        PostgresPoolStatistics(
            total: total.load(ordering: .relaxed), inUse: inUse.load(ordering: .relaxed),
            idle: idle.load(ordering: .relaxed), waiting: waiting.load(ordering: .relaxed))
    }
}

/// Whether this instance is, right now, the one of its deployment that does the work a deployment needs done once
/// rather than once per instance: sweeps, prunes, and watching shared queues while they are idle. ParleyApp's
/// coordinator holds a database lock for it.
///
/// Never a matter of correctness: everything gated by it is safe on several instances at once (row locks,
/// SKIP LOCKED, idempotent deletes), so a moment with two coordinators only duplicates work, and a moment with none
/// (the holder just died) only delays it.
public struct CoordinatorRole: Sendable {
    private let check: @Sendable () -> Bool
    /// How often the other instances still pass over a shared queue: so a backlog is drained by every instance,
    /// and nothing waits long for a new coordinator.
    public let othersEvery: Duration

    public init(othersEvery: Duration = .seconds(2), isCoordinator: @escaping @Sendable () -> Bool) {
        precondition(othersEvery > .zero, "the other instances' interval must be positive")
        self.check = isCoordinator
        self.othersEvery = othersEvery
    }

    public var isCoordinator: Bool { check() }

    /// The only instance: it does everything (tools, tests with one server).
    public static let sole = CoordinatorRole { true }
}

/// Which instances of a deployment run a periodic service's passes.
public enum Participation: Sendable {
    /// Work on this instance's own state (its caches, its connections, its buffered writes).
    case everyInstance
    /// Upkeep of shared state (sweeps, prunes): the coordinator alone.
    case coordinator(CoordinatorRole)
    /// A queue in the database that any instance may drain: the coordinator passes every interval, the others every
    /// `othersEvery`, so an idle queue costs one instance's polling and a busy one is shared.
    case sharedQueue(CoordinatorRole)

    /// Whether a pass due now runs, and how long to wait for the next one: an instance that is not the coordinator
    /// looks again after `othersEvery` at the soonest (to pass over a shared queue, or to see whether it has become
    /// the coordinator), so it wakes no more often than that for work it skips.
    func pass(interval: Duration) -> (runs: Bool, next: Duration) {
        switch self {
        case .everyInstance:
            return (true, interval)
        case .coordinator(let role):
            return role.isCoordinator ? (true, interval) : (false, max(interval, role.othersEvery))
        case .sharedQueue(let role):
            return (true, role.isCoordinator ? interval : max(interval, role.othersEvery))
        }
    }
}

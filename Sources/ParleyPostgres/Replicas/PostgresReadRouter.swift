import ParleyNet
import ParleyObservability
import Synchronization

/// Where reads that tolerate replica lag run: on a streaming replica that has replayed every commit acknowledged
/// before the read arrived, else on the primary (`ReadRoutingStateMachine` has the rule). So a client reads its
/// own writes whichever instance took them, and without replicas nothing changes: `read` hands over the primary
/// and asks the database nothing more.
///
/// A read that fails on a replica for want of a connection (or is cancelled by a recovery conflict) runs again on
/// the primary, and an unreachable replica is skipped for a while: a replica is never the reason a client sees an
/// error. Writes, and reads inside a transaction, keep using the primary directly.
public final class PostgresReadRouter: Sendable {
    public let primary: PostgresClient
    /// Owned by the router: `shutdown` closes them.
    public let replicas: [PostgresClient]
    private let routing: Mutex<Routing>
    private let logger: Logger
    private let counters: Counters

    typealias Target = ReadRoutingStateMachine.Target
    typealias Action = ReadRoutingStateMachine.Action

    private struct Routing {
        var machine: ReadRoutingStateMachine
        var reads: [ReadRoutingStateMachine.ReadID: UnsafeContinuation<Target, Never>] = [:]
        var nextRead: ReadRoutingStateMachine.ReadID = 0
    }

    /// `maxWait`: how long a read waits for a replica to replay the primary's position before it runs on the
    /// primary. `retryAfter`: how long an unreachable replica is skipped. `metrics`: reads by target and fallbacks
    /// by reason (`parley_db_reads_total`, `parley_db_read_fallbacks_total`).
    public init(
        primary: PostgresClient, replicas: [PostgresClient] = [], maxWait: Duration = .milliseconds(100),
        pollInterval: Duration = .milliseconds(2), retryAfter: Duration = .seconds(1),
        metrics: MetricsRegistry? = nil, logger: Logger = Logger(sink: LogSink(capturingAt: .error))
    ) {
        self.primary = primary
        self.replicas = replicas
        self.logger = logger.with("component", "read_router")
        routing = Mutex(
            Routing(
                machine: ReadRoutingStateMachine(
                    replicaCount: replicas.count, maxWait: maxWait, pollInterval: pollInterval,
                    // A poll is a trivial query: one that takes this long means the replica is in trouble.
                    pollTimeout: max(.seconds(1), maxWait), retryAfter: retryAfter)))
        // Without replicas nothing is routed, so nothing is counted either.
        counters = Counters(metrics: replicas.isEmpty ? nil : metrics)
    }

    /// Runs `body` with the client of the primary or of a caught-up replica. `body` must only read, outside any
    /// transaction it did not open itself: it may run twice (on a replica, then on the primary).
    public func read<T>(_ body: (PostgresClient) async throws -> T) async throws -> T {
        guard !replicas.isEmpty else { return try await body(primary) }
        switch await route() {
        case .primary(let reason):
            counters.fallbacks[reason]?.increment()
            counters.primaryReads.increment()
            return try await body(primary)
        case .replica(let index):
            do {
                let value = try await body(replicas[index])
                counters.replicaReads.increment()
                return value
            } catch let error as PostgresError where Self.isReplicaTrouble(error) {
                logger.warning(
                    "a read failed on a replica; it runs on the primary",
                    ["replica": .int(index), "error": .string(String(describing: error))])
                if error.kind != .server {
                    perform(routing.withLock { $0.machine.replicaFailed(replica: index, now: .now()) })
                }
                counters.fallbacks[.replicaError]?.increment()
                counters.primaryReads.increment()
                return try await body(primary)
            }
        }
    }

    /// Reads and fallbacks so far (what the metrics count).
    public var statistics: ReadRouterStatistics {
        ReadRouterStatistics(
            primaryReads: counters.primaryReads.current, replicaReads: counters.replicaReads.current,
            fallbacks: Dictionary(uniqueKeysWithValues: counters.fallbacks.map { ($0.key.rawValue, $0.value.current) }))
    }

    /// Reads waiting for a replica to replay their sample (for tests).
    var waitingReads: Int { routing.withLock { $0.machine.waiting.count } }

    /// Closes the replicas' clients (not the primary's).
    public func shutdown() async {
        for replica in replicas { await replica.shutdown() }
    }

    /// Failures that say more about the replica than about the read: no connection, or a statement cancelled by
    /// recovery (40001 and 57P04 on a standby), or one that tried to write (25006, a read routed by mistake).
    static func isReplicaTrouble(_ error: PostgresError) -> Bool {
        switch error.kind {
        case .unavailable, .timeout, .closed: return true
        case .decoding: return false
        case .server:
            guard let state = error.sqlState else { return false }
            return state.hasPrefix("40") || state.hasPrefix("57") || state == "25006"
        }
    }

    // MARK: Driving the state machine

    private func route() async -> Target {
        await withUnsafeContinuation { continuation in
            let actions = routing.withLock { routing in
                let id = routing.nextRead
                routing.nextRead += 1
                routing.reads[id] = continuation
                return routing.machine.readArrived(id, now: .now())
            }
            perform(actions)
        }
    }

    /// Resumes the reads the actions place, and starts the queries and timers they ask for.
    private func perform(_ actions: [Action]) {
        guard !actions.isEmpty else { return }
        var resumed: [(UnsafeContinuation<Target, Never>, Target)] = []
        for action in actions {
            switch action {
            case .run(let id, let target):
                if let continuation = routing.withLock({ $0.reads.removeValue(forKey: id) }) {
                    resumed.append((continuation, target))
                }
            case .samplePrimary:
                Task { await self.samplePrimary() }
            case .pollReplica(let index, let poll, let delay):
                Task { await self.poll(replica: index, poll: poll, after: delay) }
            case .wakeUp(let instant):
                Task {
                    let remaining = instant.since(.now())
                    if remaining > .zero { try? await Task.sleep(for: remaining) }
                    self.perform(self.routing.withLock { $0.machine.timePassed(now: .now(), wakeUp: instant) })
                }
            }
        }
        for (continuation, target) in resumed { continuation.resume(returning: target) }
    }

    private func samplePrimary() async {
        do {
            let rows = try await primary.query(
                "SELECT pg_current_wal_insert_lsn()::text AS lsn, current_setting('wal_block_size')::int8 AS page")
            guard let position = WALPosition(try rows[0].decode("lsn", as: String.self)) else {
                throw PostgresError.decoding("pg_current_wal_insert_lsn() is not a pg_lsn")
            }
            let page = try rows[0].decode("page", as: Int64.self)
            perform(
                routing.withLock {
                    $0.machine.sampled(position, pageSize: UInt64(max(0, page)), now: .now())
                })
        } catch {
            logger.warning(
                "sampling the primary's WAL position failed; reads run on the primary",
                ["error": .string(String(describing: error))])
            perform(routing.withLock { $0.machine.sampleFailed(now: .now()) })
        }
    }

    private func poll(replica index: Int, poll: UInt64, after delay: Duration) async {
        if delay > .zero { try? await Task.sleep(for: delay) }
        do {
            // NULL when the server is not in recovery: not a standby (or promoted), so never in step with the
            // primary's log.
            let rows = try await replicas[index].query("SELECT pg_last_wal_replay_lsn()::text AS lsn")
            guard let text = try rows[0].decode("lsn", as: String?.self), let position = WALPosition(text) else {
                throw PostgresError.decoding("the server is not a standby (pg_last_wal_replay_lsn() is NULL)")
            }
            perform(
                routing.withLock {
                    $0.machine.replayPolled(replica: index, poll: poll, position: position, now: .now())
                })
        } catch {
            logger.warning(
                "a replica did not answer; it is skipped for a while",
                ["replica": .int(index), "error": .string(String(describing: error))])
            perform(routing.withLock { $0.machine.replayPollFailed(replica: index, poll: poll, now: .now()) })
        }
    }

    private struct Counters: Sendable {
        let primaryReads: Counter
        let replicaReads: Counter
        let fallbacks: [ReadRoutingStateMachine.FallbackReason: Counter]

        init(metrics: MetricsRegistry?) {
            let reads = metrics?.counter(
                "parley_db_reads_total", help: "Lag-tolerant reads by where they ran (primary or replica).",
                labels: ["target"])
            let fallbacks = metrics?.counter(
                "parley_db_read_fallbacks_total", help: "Lag-tolerant reads that ran on the primary, by reason.",
                labels: ["reason"])
            primaryReads = reads?.labels("primary") ?? Counter()
            replicaReads = reads?.labels("replica") ?? Counter()
            self.fallbacks = Dictionary(
                uniqueKeysWithValues: ReadRoutingStateMachine.FallbackReason.allCases.map {
                    ($0, fallbacks?.labels($0.rawValue) ?? Counter())
                })
        }
    }
}

/// `PostgresReadRouter.statistics`: reads by where they ran, and fallbacks to the primary by reason (`lagging`,
/// `replica_down`, `sample_failed`, `replica_error`).
public struct ReadRouterStatistics: Sendable, Hashable {
    public var primaryReads: Int
    public var replicaReads: Int
    public var fallbacks: [String: Int]
}

import ParleyNet

/// Decides where a lag-tolerant read runs: on a streaming replica that has replayed everything the primary had
/// committed when the read arrived, else on the primary. Pure: the driver (`PostgresReadRouter`) runs its actions
/// (queries, timers, resuming the read) and reports what came of them, with the time.
///
/// The rule that gives read-your-writes on every instance: a read first waits for a sample of the primary's WAL
/// insert position sent after it arrived (every commit acknowledged before the read arrived is at or below it),
/// then goes to a replica whose replay position covers the sample. One sample is in flight at a time: reads that
/// arrive meanwhile wait for the next one, which is sent when it returns. A replica's replay position is polled
/// the same way (one poll in flight per replica, at most one per `pollInterval`) while reads wait for it. A read
/// no replica covers within `maxWait` of its sample goes to the primary; so does every read while no replica is
/// usable. A replica whose poll fails (or does not answer within `pollTimeout`) or whose read cannot reach it is
/// skipped for `retryAfter`, then polled again before it serves.
struct ReadRoutingStateMachine {
    typealias ReadID = UInt64

    enum FallbackReason: String, Sendable, CaseIterable {
        /// No replica replayed the sample within the wait.
        case lagging
        /// No replica was usable (all failed recently).
        case replicasDown = "replica_down"
        /// The primary's position could not be sampled.
        case sampleFailed = "sample_failed"
        /// The read failed on the replica and ran again on the primary (the driver reports it).
        case replicaError = "replica_error"
    }

    enum Target: Sendable, Hashable {
        case replica(Int)
        case primary(FallbackReason)
    }

    enum Action: Sendable, Hashable {
        /// Query the primary's WAL insert position; report `sampled` or `sampleFailed`.
        case samplePrimary
        /// After `delay`, query the replica's replay position; report `replayPolled` or `replayPollFailed` with
        /// `poll` (a poll given up on for its time is answered by nobody).
        case pollReplica(Int, poll: UInt64, after: Duration)
        /// Call `timePassed(now:wakeUp:)` with this instant at (or after) it. Only the earliest deadline is asked
        /// for; the next one comes with the call.
        case wakeUp(at: Instant)
        /// The read may run there now.
        case run(ReadID, Target)
    }

    struct Replica {
        /// What a poll last saw (a lower bound: replay only moves forward). Nil until a poll succeeds, and again
        /// after a failure, so a replica that was down serves only once a poll has reached it.
        var replayed: WALPosition?
        /// The poll in flight (its number) and when it is sent.
        var polling: (poll: UInt64, sentAt: Instant)?
        var lastPollAt: Instant?
        var skippedUntil: Instant?

        func isUsable(at now: Instant) -> Bool { skippedUntil.map { now >= $0 } ?? true }
    }

    struct WaitingRead {
        var id: ReadID
        var sample: WALPosition
        var deadline: Instant
    }

    let maxWait: Duration
    let pollInterval: Duration
    let pollTimeout: Duration
    let retryAfter: Duration
    private(set) var replicas: [Replica]
    /// Reads the sample in flight was sent for; nil when none is in flight.
    private var sampleReads: [ReadID]?
    /// Reads that arrived after the sample in flight was sent: they wait for the next one.
    private var nextSampleReads: [ReadID] = []
    private(set) var waiting: [WaitingRead] = []
    /// `wal_block_size`, from the sample (`WALPosition.covers`).
    private var pageSize: UInt64 = 8192
    private var nextReplica = 0
    private var nextPoll: UInt64 = 0
    /// The earliest `wakeUp` asked for and not yet reported.
    private var scheduledWakeUp: Instant?

    init(replicaCount: Int, maxWait: Duration, pollInterval: Duration, pollTimeout: Duration, retryAfter: Duration) {
        replicas = Array(repeating: Replica(), count: replicaCount)
        self.maxWait = maxWait
        self.pollInterval = pollInterval
        self.pollTimeout = pollTimeout
        self.retryAfter = retryAfter
    }

    // MARK: Events

    mutating func readArrived(_ id: ReadID, now: Instant) -> [Action] {
        guard replicas.contains(where: { $0.isUsable(at: now) }) else { return [.run(id, .primary(.replicasDown))] }
        if sampleReads == nil {
            sampleReads = [id]
            return [.samplePrimary]
        }
        nextSampleReads.append(id)
        return []
    }

    mutating func sampled(_ position: WALPosition, pageSize: UInt64, now: Instant) -> [Action] {
        if pageSize > 0 { self.pageSize = pageSize }
        var actions: [Action] = []
        for id in takeSampleReads(&actions) {
            if let replica = pickReplica(covering: position, now: now) {
                actions.append(.run(id, .replica(replica)))
            } else if !replicas.contains(where: { $0.isUsable(at: now) }) {
                actions.append(.run(id, .primary(.replicasDown)))
            } else if maxWait <= .zero {
                actions.append(.run(id, .primary(.lagging)))
            } else {
                waiting.append(WaitingRead(id: id, sample: position, deadline: now + maxWait))
            }
        }
        actions += pollsNeeded(now: now)
        return actions + wakeUpIfNeeded()
    }

    mutating func sampleFailed(now: Instant) -> [Action] {
        var actions: [Action] = []
        for id in takeSampleReads(&actions) { actions.append(.run(id, .primary(.sampleFailed))) }
        return actions
    }

    mutating func replayPolled(replica index: Int, poll: UInt64, position: WALPosition, now: Instant) -> [Action] {
        guard replicas.indices.contains(index), replicas[index].polling?.poll == poll else { return [] }
        replicas[index].polling = nil
        replicas[index].skippedUntil = nil
        replicas[index].replayed = max(replicas[index].replayed ?? position, position)
        var actions: [Action] = []
        var stillWaiting: [WaitingRead] = []
        for read in waiting {
            if let replica = pickReplica(covering: read.sample, now: now) {
                actions.append(.run(read.id, .replica(replica)))
            } else {
                stillWaiting.append(read)
            }
        }
        waiting = stillWaiting
        actions += expire(now: now)
        actions += pollsNeeded(now: now)
        return actions + wakeUpIfNeeded()
    }

    mutating func replayPollFailed(replica index: Int, poll: UInt64, now: Instant) -> [Action] {
        guard replicas.indices.contains(index), replicas[index].polling?.poll == poll else { return [] }
        skip(replica: index, now: now)
        return expire(now: now) + wakeUpIfNeeded()
    }

    /// A read on the replica failed for want of a connection: it is skipped like after a failed poll (the driver
    /// runs the read again on the primary).
    mutating func replicaFailed(replica index: Int, now: Instant) -> [Action] {
        guard replicas.indices.contains(index) else { return [] }
        skip(replica: index, now: now)
        return expire(now: now) + wakeUpIfNeeded()
    }

    /// Deadlines of waiting reads and of polls in flight. `wakeUp`: the instant of the `wakeUp` action that led
    /// to the call, if one did.
    mutating func timePassed(now: Instant, wakeUp: Instant? = nil) -> [Action] {
        if let wakeUp, wakeUp == scheduledWakeUp { scheduledWakeUp = nil }
        for index in replicas.indices {
            if let polling = replicas[index].polling, now >= polling.sentAt + pollTimeout {
                skip(replica: index, now: now)
            }
        }
        return expire(now: now) + wakeUpIfNeeded()
    }

    // MARK: Helpers

    private mutating func takeSampleReads(_ actions: inout [Action]) -> [ReadID] {
        let reads = sampleReads ?? []
        sampleReads = nil
        if !nextSampleReads.isEmpty {
            sampleReads = nextSampleReads
            nextSampleReads = []
            actions.append(.samplePrimary)
        }
        return reads
    }

    private mutating func skip(replica index: Int, now: Instant) {
        replicas[index].skippedUntil = now + retryAfter
        replicas[index].replayed = nil
        replicas[index].polling = nil
    }

    /// Waiting reads past their deadline go to the primary, and all of them when no replica is usable.
    private mutating func expire(now: Instant) -> [Action] {
        let anyUsable = replicas.contains { $0.isUsable(at: now) }
        var actions: [Action] = []
        waiting.removeAll { read in
            if !anyUsable {
                actions.append(.run(read.id, .primary(.replicasDown)))
                return true
            }
            guard read.deadline <= now else { return false }
            actions.append(.run(read.id, .primary(.lagging)))
            return true
        }
        return actions
    }

    /// The next usable replica in turn whose replay covers `sample`.
    private mutating func pickReplica(covering sample: WALPosition, now: Instant) -> Int? {
        let count = replicas.count
        for step in 0..<count {
            let index = (nextReplica + step) % count
            let replica = replicas[index]
            guard replica.isUsable(at: now), let replayed = replica.replayed,
                replayed.covers(insertPosition: sample, pageSize: pageSize)
            else { continue }
            nextReplica = (index + 1) % count
            return index
        }
        return nil
    }

    /// While reads wait, each usable replica that is not being polled is polled, no sooner than `pollInterval`
    /// after its previous poll.
    private mutating func pollsNeeded(now: Instant) -> [Action] {
        guard !waiting.isEmpty else { return [] }
        var actions: [Action] = []
        for index in replicas.indices where replicas[index].polling == nil && replicas[index].isUsable(at: now) {
            let delay = replicas[index].lastPollAt.map { pollInterval - now.since($0) } ?? .zero
            let wait = max(delay, .zero)
            let sentAt = now + wait
            nextPoll += 1
            replicas[index].polling = (nextPoll, sentAt)
            replicas[index].lastPollAt = sentAt
            actions.append(.pollReplica(index, poll: nextPoll, after: wait))
        }
        return actions
    }

    /// A `wakeUp` for the earliest deadline (a waiting read's, a poll's), unless one at or before it is pending.
    private mutating func wakeUpIfNeeded() -> [Action] {
        let polls = replicas.compactMap { $0.polling.map { $0.sentAt + pollTimeout } }
        guard let next = (waiting.map(\.deadline) + polls).min() else { return [] }
        if let scheduled = scheduledWakeUp, scheduled <= next { return [] }
        scheduledWakeUp = next
        return [.wakeUp(at: next)]
    }
}

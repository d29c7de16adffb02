import ParleyNet
import Testing

@testable import ParleyPostgres

/// Where lag-tolerant reads go, as event -> action sequences with a hand-driven clock.
@Suite struct ReadRoutingStateMachineTests {
    typealias Machine = ReadRoutingStateMachine

    let t0 = Instant(nanoseconds: 1_000_000_000)
    func at(_ ms: Int) -> Instant { t0 + .milliseconds(ms) }
    func lsn(_ offset: UInt64) -> WALPosition { WALPosition(offset: offset) }

    func machine(replicas: Int = 1, maxWait: Int = 100) -> Machine {
        Machine(
            replicaCount: replicas, maxWait: .milliseconds(maxWait), pollInterval: .milliseconds(2),
            pollTimeout: .seconds(1), retryAfter: .seconds(1))
    }

    /// Reports a poll of `replica` that found `position`: the poll number comes from the action that asked for it.
    func poll(_ actions: [Machine.Action], replica: Int) -> UInt64? {
        for case .pollReplica(replica, let poll, _) in actions { return poll }
        return nil
    }

    @Test func aReadWaitsForASampleThenForTheReplicaToReplayIt() {
        var m = machine()
        #expect(m.readArrived(1, now: t0) == [.samplePrimary])
        let afterSample = m.sampled(lsn(1000), pageSize: 8192, now: at(1))
        #expect(afterSample == [.pollReplica(0, poll: 1, after: .zero), .wakeUp(at: at(101))])
        // Behind the sample: polled again, no sooner than the poll interval after the last one.
        let behind = m.replayPolled(replica: 0, poll: 1, position: lsn(900), now: at(1))
        #expect(behind == [.pollReplica(0, poll: 2, after: .milliseconds(2))])
        #expect(m.replayPolled(replica: 0, poll: 2, position: lsn(1000), now: at(4)) == [.run(1, .replica(0))])
        #expect(m.waiting.isEmpty)
    }

    @Test func aReplicaKnownToBeAheadServesAtOnceAfterTheSample() {
        var m = machine()
        _ = m.readArrived(1, now: t0)
        let first = m.sampled(lsn(1000), pageSize: 8192, now: at(1))
        _ = m.replayPolled(replica: 0, poll: poll(first, replica: 0)!, position: lsn(5000), now: at(2))
        #expect(m.readArrived(2, now: at(3)) == [.samplePrimary])
        #expect(m.sampled(lsn(4000), pageSize: 8192, now: at(4)) == [.run(2, .replica(0))])
    }

    @Test func readsArrivingWhileASampleIsInFlightWaitForTheNextOne() {
        var m = machine()
        #expect(m.readArrived(1, now: t0) == [.samplePrimary])
        #expect(m.readArrived(2, now: at(1)) == [])
        #expect(m.readArrived(3, now: at(1)) == [])
        // The first sample serves only read 1; the next is sent at once for reads 2 and 3.
        let first = m.sampled(lsn(1000), pageSize: 8192, now: at(2))
        #expect(first.first == .samplePrimary)
        #expect(m.waiting.map(\.id) == [1])
        _ = m.sampled(lsn(2000), pageSize: 8192, now: at(3))
        #expect(m.waiting.map(\.id) == [1, 2, 3])
        #expect(m.waiting.map(\.sample) == [lsn(1000), lsn(2000), lsn(2000)])
        // A replay between the two samples serves only the read the first was for.
        let polled = m.replayPolled(replica: 0, poll: poll(first, replica: 0)!, position: lsn(1500), now: at(4))
        #expect(polled.contains(.run(1, .replica(0))))
        #expect(!polled.contains(.run(2, .replica(0))) && m.waiting.map(\.id) == [2, 3])
    }

    @Test func aReadNoReplicaCoversWithinTheWaitRunsOnThePrimary() {
        var m = machine(maxWait: 100)
        _ = m.readArrived(1, now: t0)
        let actions = m.sampled(lsn(1000), pageSize: 8192, now: at(1))
        #expect(actions.contains(.wakeUp(at: at(101))))
        let p = poll(actions, replica: 0)!
        _ = m.replayPolled(replica: 0, poll: p, position: lsn(10), now: at(2))
        // A timer that fires early expires nothing and asks again.
        #expect(m.timePassed(now: at(100), wakeUp: at(101)) == [.wakeUp(at: at(101))])
        // The poll in flight still has its own deadline.
        #expect(m.timePassed(now: at(101), wakeUp: at(101)) == [.run(1, .primary(.lagging)), .wakeUp(at: at(1003))])
        #expect(m.waiting.isEmpty)
    }

    @Test func aZeroWaitSendsALaggingReadStraightToThePrimary() {
        var m = machine(maxWait: 0)
        _ = m.readArrived(1, now: t0)
        #expect(m.sampled(lsn(1000), pageSize: 8192, now: at(1)) == [.run(1, .primary(.lagging))])
    }

    @Test func aFailedSampleSendsItsReadsToThePrimary() {
        var m = machine()
        _ = m.readArrived(1, now: t0)
        _ = m.readArrived(2, now: at(1))
        #expect(m.sampleFailed(now: at(2)) == [.samplePrimary, .run(1, .primary(.sampleFailed))])
        #expect(m.sampleFailed(now: at(3)) == [.run(2, .primary(.sampleFailed))])
        // Nothing in flight any more: the next read sends a new sample.
        #expect(m.readArrived(3, now: at(4)) == [.samplePrimary])
    }

    @Test func anUnreachableReplicaIsSkippedThenPolledAgainBeforeItServes() {
        var m = machine()
        _ = m.readArrived(1, now: t0)
        let p = poll(m.sampled(lsn(1000), pageSize: 8192, now: at(1)), replica: 0)!
        #expect(m.replayPollFailed(replica: 0, poll: p, now: at(2)) == [.run(1, .primary(.replicasDown))])
        // Skipped: no sample, straight to the primary.
        #expect(m.readArrived(2, now: at(500)) == [.run(2, .primary(.replicasDown))])
        // After the retry interval it is tried again, and serves only once a poll reaches it.
        #expect(m.readArrived(3, now: at(1002)) == [.samplePrimary])
        let retry = m.sampled(lsn(1000), pageSize: 8192, now: at(1003))
        let q = poll(retry, replica: 0)!
        #expect(m.replayPolled(replica: 0, poll: q, position: lsn(1000), now: at(1004)) == [.run(3, .replica(0))])
    }

    @Test func aReplicaWhoseReadFailedForgetsItsPosition() {
        var m = machine()
        _ = m.readArrived(1, now: t0)
        let p = poll(m.sampled(lsn(1000), pageSize: 8192, now: at(1)), replica: 0)!
        _ = m.replayPolled(replica: 0, poll: p, position: lsn(1000), now: at(2))
        #expect(m.replicaFailed(replica: 0, now: at(3)).isEmpty)
        #expect(m.replicas[0].replayed == nil)
        #expect(m.readArrived(2, now: at(4)) == [.run(2, .primary(.replicasDown))])
    }

    @Test func aPollThatDoesNotAnswerInTimeSkipsTheReplicaAndItsLateAnswerIsIgnored() {
        var m = machine(maxWait: 5000)
        _ = m.readArrived(1, now: t0)
        let actions = m.sampled(lsn(1000), pageSize: 8192, now: at(1))
        let p = poll(actions, replica: 0)!
        // The poll's deadline comes first.
        #expect(actions.contains(.wakeUp(at: at(1001))))
        #expect(m.timePassed(now: at(1001), wakeUp: at(1001)) == [.run(1, .primary(.replicasDown))])
        #expect(m.replayPolled(replica: 0, poll: p, position: lsn(1000), now: at(1002)).isEmpty)
        #expect(m.replicas[0].replayed == nil)
    }

    @Test func caughtUpReplicasTakeReadsInTurnAndALaggingOneIsPassedOver() {
        var m = machine(replicas: 3)
        _ = m.readArrived(0, now: t0)
        let actions = m.sampled(lsn(1000), pageSize: 8192, now: at(1))
        _ = m.replayPolled(replica: 0, poll: poll(actions, replica: 0)!, position: lsn(1000), now: at(2))
        _ = m.replayPolled(replica: 1, poll: poll(actions, replica: 1)!, position: lsn(10), now: at(2))
        _ = m.replayPolled(replica: 2, poll: poll(actions, replica: 2)!, position: lsn(2000), now: at(2))
        var targets: [Machine.Target] = []
        for id in 1...4 {
            #expect(m.readArrived(UInt64(id), now: at(3)) == [.samplePrimary])
            for case .run(_, let target) in m.sampled(lsn(1000), pageSize: 8192, now: at(3)) { targets.append(target) }
        }
        #expect(targets == [.replica(2), .replica(0), .replica(2), .replica(0)])
    }

    @Test func onlyTheEarliestDeadlineIsAskedFor() {
        var m = machine(maxWait: 100)
        _ = m.readArrived(1, now: t0)
        let first = m.sampled(lsn(1000), pageSize: 8192, now: at(1))
        #expect(first.filter { if case .wakeUp = $0 { true } else { false } } == [.wakeUp(at: at(101))])
        _ = m.readArrived(2, now: at(10))
        #expect(
            !m.sampled(lsn(1000), pageSize: 8192, now: at(11)).contains { if case .wakeUp = $0 { true } else { false } }
        )
        // When the first fires, the next deadline is asked for.
        #expect(m.timePassed(now: at(101), wakeUp: at(101)) == [.run(1, .primary(.lagging)), .wakeUp(at: at(111))])
    }
}

@Suite struct WALPositionTests {
    @Test func parsesAndPrintsPgLSN() {
        #expect(WALPosition("16/B374D848")?.offset == 0x16_B374_D848)
        #expect(WALPosition("0/0")?.offset == 0)
        #expect(WALPosition("FFFFFFFF/FFFFFFFF")?.offset == UInt64.max)
        #expect(WALPosition("16/B374D848")?.description == "16/B374D848")
        for bad in ["", "/", "16", "16/", "/1", "g/1", "1/2/3", "123456789/0", " 1/2", "-1/2"] {
            #expect(WALPosition(bad) == nil, "\(bad)")
        }
        #expect(WALPosition("1/2")! < WALPosition("2/1")!)
    }

    @Test func aReplayedPositionCoversTheInsertPositionPastAnEmptyPageHeader() {
        let page: UInt64 = 8192
        let boundary = WALPosition(offset: 5 * page)
        // The last record ended exactly at a page boundary: the insert position points past the next header.
        #expect(boundary.covers(insertPosition: WALPosition(offset: 5 * page + 24), pageSize: page))
        #expect(boundary.covers(insertPosition: WALPosition(offset: 5 * page + 40), pageSize: page))
        // Anything more than a header means a record the replica has not replayed.
        #expect(!boundary.covers(insertPosition: WALPosition(offset: 5 * page + 48), pageSize: page))
        // Off a boundary the positions compare as they are.
        let inside = WALPosition(offset: 5 * page + 8)
        #expect(!inside.covers(insertPosition: WALPosition(offset: 5 * page + 32), pageSize: page))
        #expect(inside.covers(insertPosition: inside, pageSize: page))
        #expect(WALPosition(offset: 100).covers(insertPosition: WALPosition(offset: 99), pageSize: page))
    }
}

import ParleyNet
import Testing

@testable import ParleyPostgres

/// The pool's bookkeeping as event -> action sequences, with a hand-driven clock.
@Suite struct PoolStateMachineTests {
    final class Conn {}
    typealias Machine = PoolStateMachine<Conn, String>

    let t0 = Instant(nanoseconds: 1_000_000_000)

    func at(_ ms: Int) -> Instant { t0 + .milliseconds(ms) }

    @Test func firstRequestStartsAConnectionAndWaitsForIt() {
        var machine = Machine(maxConnections: 2, acquireTimeout: .milliseconds(100))
        guard case .wait(startConnect: true, armTimer: let deadline) = machine.requestArrived("a", now: t0) else {
            Issue.record("expected wait + connect")
            return
        }
        #expect(deadline == at(100))
        #expect(machine.total == 1 && machine.connecting == 1 && machine.waiting == 1)
        let conn = Conn()
        guard case .run("a", on: let used) = machine.connectionEstablished(conn) else {
            Issue.record("expected the waiter to get the new connection")
            return
        }
        #expect(used === conn)
        #expect(machine.leased == 1 && machine.waiting == 0)
        guard case .park = machine.connectionReleased(conn) else {
            Issue.record("expected park")
            return
        }
        #expect(machine.idle.count == 1 && machine.leased == 0)
        guard case .run("b", on: let reused) = machine.requestArrived("b", now: at(1)) else {
            Issue.record("expected the idle connection to be reused")
            return
        }
        #expect(reused === conn)
    }

    @Test func neverOpensMoreThanTheMaximumAndServesWaitersInOrder() {
        var machine = Machine(maxConnections: 2, acquireTimeout: .seconds(1))
        var connects = 0
        for (i, name) in ["a", "b", "c", "d"].enumerated() {
            if case .wait(let startConnect, _) = machine.requestArrived(name, now: at(i)), startConnect {
                connects += 1
            }
        }
        #expect(connects == 2)
        #expect(machine.total == 2 && machine.waiting == 4)
        let first = Conn(), second = Conn()
        var served: [String] = []
        if case .run(let r, _) = machine.connectionEstablished(first) { served.append(r) }
        if case .run(let r, _) = machine.connectionEstablished(second) { served.append(r) }
        if case .run(let r, _) = machine.connectionReleased(second) { served.append(r) }
        if case .run(let r, _) = machine.connectionReleased(first) { served.append(r) }
        #expect(served == ["a", "b", "c", "d"])
        #expect(machine.total == 2)
    }

    @Test func waitersTimeOutInOrderAndTheTimerRearms() {
        var machine = Machine(maxConnections: 1, acquireTimeout: .milliseconds(100))
        _ = machine.requestArrived("held", now: t0)
        _ = machine.connectionEstablished(Conn())
        // The timer armed for "held" still fires, finds nobody waiting and does not rearm.
        let idleFire = machine.timerFired(now: at(5))
        #expect(idleFire.expired.isEmpty && idleFire.rearm == nil)
        guard case .wait(startConnect: false, armTimer: let armed) = machine.requestArrived("x", now: at(10)) else {
            Issue.record("expected wait without connect")
            return
        }
        #expect(armed == at(110))
        guard case .wait(startConnect: false, armTimer: nil) = machine.requestArrived("y", now: at(50)) else {
            Issue.record("the timer is already armed")
            return
        }
        let early = machine.timerFired(now: at(60))
        #expect(early.expired.isEmpty && early.rearm == at(110))
        let first = machine.timerFired(now: at(110))
        #expect(first.expired == ["x"] && first.rearm == at(150))
        let second = machine.timerFired(now: at(151))
        #expect(second.expired == ["y"] && second.rearm == nil)
        #expect(machine.waiting == 0)
    }

    @Test func failedConnectFailsTheOldestWaiterAtOnceAndRetriesForTheRest() {
        var machine = Machine(maxConnections: 1, acquireTimeout: .seconds(5))
        _ = machine.requestArrived("a", now: t0)
        _ = machine.requestArrived("b", now: t0)
        #expect(machine.connecting == 1)
        let outcome = machine.connectFailed()
        #expect(outcome.fail == "a")
        #expect(outcome.startConnect) // "b" still waits and nothing is being opened for it
        let last = machine.connectFailed()
        #expect(last.fail == "b" && !last.startConnect)
        #expect(machine.total == 0 && machine.waiting == 0)
    }

    @Test func closedConnectionsLeaveTheCountsAndAreReplacedForWaiters() {
        var machine = Machine(maxConnections: 1, acquireTimeout: .seconds(5))
        let conn = Conn()
        _ = machine.requestArrived("a", now: t0)
        _ = machine.connectionEstablished(conn)
        _ = machine.requestArrived("b", now: t0)
        #expect(machine.total == 1 && machine.waiting == 1)
        let replace = machine.connectionClosed(conn)
        #expect(replace) // the leased one died: start a replacement for "b"
        #expect(machine.total == 1 && machine.connecting == 1)
        let idle = Conn()
        _ = machine.connectionEstablished(idle)
        _ = machine.connectionReleased(idle)
        #expect(machine.idle.count == 1)
        let replaceIdle = machine.connectionClosed(idle)
        #expect(!replaceIdle)
        #expect(machine.total == 0)
    }

    @Test func shutdownFailsWaitersClosesIdleAndRefusesNewRequests() {
        var machine = Machine(maxConnections: 2, acquireTimeout: .seconds(5))
        let a = Conn(), b = Conn()
        _ = machine.requestArrived("r1", now: t0)
        _ = machine.requestArrived("r2", now: t0)
        _ = machine.connectionEstablished(a) // r1 on a
        _ = machine.requestArrived("r3", now: t0)
        let (close, fail) = machine.shutDown()
        #expect(close.isEmpty)
        #expect(fail == ["r2", "r3"])
        guard case .close(let closing) = machine.connectionEstablished(b) else {
            Issue.record("a connection finishing after shutdown is closed")
            return
        }
        #expect(closing === b)
        guard case .fail("r4", .closed) = machine.requestArrived("r4", now: t0) else {
            Issue.record("requests after shutdown fail")
            return
        }
        guard case .close = machine.connectionReleased(a) else {
            Issue.record("released connections are closed after shutdown")
            return
        }
        #expect(!machine.isDrained)
        _ = machine.connectionClosed(a)
        _ = machine.connectionClosed(b)
        #expect(machine.isDrained)
    }
}

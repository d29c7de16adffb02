import ParleyNet
import Testing

@testable import ParleyNATS

/// A mock clock: instants are seconds after an arbitrary origin.
private func t(_ seconds: Double) -> Instant { Instant(nanoseconds: 1_000_000_000_000 + UInt64(seconds * 1e9)) }

private typealias Machine = NATSConnectionStateMachine
private typealias Action = NATSConnectionStateMachine.Action

private func configuration(servers: Int = 1) -> NATSConfiguration {
    var configuration = NATSConfiguration(servers: (0..<servers).map { NATSServerURL(host: "10.0.0.\($0 + 1)") })
    configuration.pingInterval = .seconds(10)
    configuration.maxOutstandingPings = 2
    configuration.reconnectBackoffMin = .milliseconds(100)
    configuration.reconnectBackoffMax = .milliseconds(800)
    configuration.connectTimeout = .seconds(2)
    configuration.drainTimeout = .seconds(5)
    configuration.pendingBufferBytes = 100
    configuration.writeHighWaterMark = 1000
    return configuration
}

private func info(maxPayload: Int? = 1 << 20, tls: Bool? = nil) -> NATSServerInfo {
    var info = NATSServerInfo(serverID: "S", maxPayload: maxPayload)
    info.tlsRequired = tls
    return info
}

private func sent(_ text: String) -> Action { .send(Array(text.utf8)) }

private func attemptFailed(_ server: Int, _ error: NATSError) -> Action {
    .report(.attemptFailed(server: "nats://10.0.0.\(server + 1):4222", error))
}

/// The text of the first `.send` among `actions`.
private func sentText(_ actions: [Action]) -> String? {
    for case .send(let bytes) in actions { return String(decoding: bytes, as: UTF8.self) }
    return nil
}

/// A machine whose first connection to server 0 is confirmed at t(0).
private func connectedMachine(_ configuration: NATSConfiguration = configuration()) -> Machine {
    var machine = Machine(configuration: configuration, seed: 1)
    _ = machine.started(now: t(0))
    _ = machine.infoReceived(info(), now: t(0))
    _ = machine.pongReceived(now: t(0))
    precondition(machine.isConnected)
    return machine
}

/// Publishes `count` bytes of payload to `s`.
private func publish(_ machine: inout Machine, payload: Int = 1, unsent: Int = 0) -> Machine.PublishDecision {
    let decision = machine.publishRequested(
        payloadCount: payload, encodedCount: NATSEncoder.publishSize(subject: "s", replyTo: nil, payloadCount: payload),
        unsentOutput: unsent)
    if decision == .pend {
        machine.appendPending {
            NATSEncoder.publish(subject: "s", payload: [UInt8](repeating: 0x61, count: payload), into: &$0)
        }
    }
    return decision
}

/// The delay the machine chose for its next attempt, and the server it will try.
private func plannedAttempt(_ machine: Machine, after now: Instant) -> (delay: Double, server: Int)? {
    guard case .waitingToReconnect(let server, let at) = machine.state else { return nil }
    return (Double(at.nanoseconds - now.nanoseconds) / 1e9, server)
}

@Suite struct StateMachineConnectingTests {
    @Test func startsByConnectingToTheFirstServerWithADeadline() {
        var machine = Machine(configuration: configuration(servers: 3), seed: 1)
        #expect(machine.started(now: t(0)) == [.connect(server: 0)])
        #expect(machine.nextDeadline == t(2))
        #expect(machine.started(now: t(0)) == [])
    }

    @Test func answersINFOWithCONNECTAndAPINGAndIsConnectedOnlyAtThePONG() throws {
        var machine = Machine(configuration: configuration(), seed: 1)
        _ = machine.started(now: t(0))
        let text = try #require(sentText(machine.infoReceived(info(), now: t(0.1))))
        #expect(text.hasPrefix("CONNECT {\"verbose\":false,\"pedantic\":false,"))
        #expect(text.hasSuffix("}\r\nPING\r\n"))
        #expect(!machine.isConnected)
        #expect(machine.pongReceived(now: t(0.2)) == [.report(.connected(server: "nats://10.0.0.1:4222"))])
        #expect(machine.isConnected)
        #expect(machine.nextDeadline == t(10.2))
    }

    @Test func resubscribesEveryLiveSubscriptionBetweenCONNECTAndPING() throws {
        var machine = connectedMachine()
        #expect(
            try machine.subscribeRequested(NATSSubscriptionID(1), subject: "a", queue: nil) == [sent("SUB a 1\r\n")])
        #expect(
            try machine.subscribeRequested(NATSSubscriptionID(2), subject: "b.>", queue: "q") == [
                sent("SUB b.> q 2\r\n")
            ])
        _ = machine.connectionLost(.connectionLost("reset"), now: t(1))
        // Subscribed while disconnected: nothing to send until the next connection.
        #expect(try machine.subscribeRequested(NATSSubscriptionID(3), subject: "c", queue: nil) == [])
        _ = machine.timerFired(now: t(5))
        let text = try #require(sentText(machine.infoReceived(info(), now: t(5))))
        #expect(text.hasSuffix("}\r\nSUB a 1\r\nSUB b.> q 2\r\nSUB c 3\r\nPING\r\n"))
    }

    @Test func answersTheServersPINGWithPONG() {
        var machine = connectedMachine()
        #expect(machine.pingReceived(now: t(1)) == [sent("PONG\r\n")])
    }

    @Test func timesOutAnAttemptThatGetsNoPONG() {
        var machine = Machine(configuration: configuration(servers: 2), seed: 1)
        _ = machine.started(now: t(0))
        _ = machine.infoReceived(info(), now: t(0.5))
        #expect(machine.timerFired(now: t(1.9)) == [])
        #expect(machine.timerFired(now: t(2)) == [.closeSocket, attemptFailed(0, .connectTimedOut)])
        #expect(plannedAttempt(machine, after: t(2))?.server == 1)
    }

    @Test func triesTheNextServerWhenTheServerRequiresTLS() {
        var machine = Machine(configuration: configuration(servers: 2), seed: 1)
        _ = machine.started(now: t(0))
        #expect(machine.infoReceived(info(tls: true), now: t(0)) == [.closeSocket, attemptFailed(0, .tlsRequired)])
        #expect(plannedAttempt(machine, after: t(0))?.server == 1)
    }

    @Test func closesAtOnceWithoutServers() {
        var machine = Machine(configuration: NATSConfiguration(servers: []), seed: 1)
        #expect(machine.started(now: t(0)) == [.report(.closed(.connectFailed("no server configured")))])
        #expect(machine.isClosed)
    }
}

@Suite struct StateMachineBackoffTests {
    @Test func backsOffDoublingToTheMaximumWithUpToHalfOfJitterRoundRobin() throws {
        var machine = Machine(configuration: configuration(servers: 3), seed: 42)
        _ = machine.started(now: t(0))
        var now = t(0)
        var servers: [Int] = []
        for expected in [0.1, 0.2, 0.4, 0.8, 0.8, 0.8] {
            let attempted = try #require(machine.currentServer)
            let failed = machine.connectFailed(.connectFailed("refused"), now: now)
            #expect(failed == [.closeSocket, attemptFailed(attempted, .connectFailed("refused"))])
            let (delay, server) = try #require(plannedAttempt(machine, after: now))
            #expect(delay >= expected && delay <= expected * 1.5, "delay \(delay) for base \(expected)")
            servers.append(server)
            #expect(machine.timerFired(now: now) == [], "fired before its time")
            now = machine.nextDeadline!
            #expect(machine.timerFired(now: now) == [.connect(server: server)])
        }
        #expect(servers == [1, 2, 0, 1, 2, 0])
    }

    @Test func jitterVariesBetweenAttempts() throws {
        var delays: Set<Double> = []
        for seed in 0..<5 as Range<UInt64> {
            var machine = Machine(configuration: configuration(), seed: seed)
            _ = machine.started(now: t(0))
            _ = machine.connectFailed(.connectFailed("refused"), now: t(0))
            delays.insert(try #require(plannedAttempt(machine, after: t(0))).delay)
        }
        #expect(delays.count > 1)
    }

    @Test func startsOverAtTheMinimumOnceAConnectionIsConfirmed() throws {
        var machine = Machine(configuration: configuration(servers: 2), seed: 3)
        _ = machine.started(now: t(0))
        for _ in 0..<4 {
            _ = machine.connectFailed(.connectFailed("refused"), now: t(0))
            _ = machine.timerFired(now: machine.nextDeadline!)
        }
        _ = machine.infoReceived(info(), now: t(9))
        _ = machine.pongReceived(now: t(9))
        #expect(machine.failedAttempts == 0)
        let actions = machine.connectionLost(.connectionLost("closed by the server"), now: t(10))
        #expect(actions == [.closeSocket, .report(.disconnected(.connectionLost("closed by the server")))])
        let (delay, _) = try #require(plannedAttempt(machine, after: t(10)))
        #expect(delay >= 0.1 && delay <= 0.15)
    }

    @Test func triesTheOtherServerFirstAfterLosingOne() throws {
        var machine = Machine(configuration: configuration(servers: 2), seed: 1)
        _ = machine.started(now: t(0))
        _ = machine.infoReceived(info(), now: t(0))
        _ = machine.pongReceived(now: t(0))
        _ = machine.connectionLost(.connectionLost("reset"), now: t(1))
        #expect(plannedAttempt(machine, after: t(1))?.server == 1)
        #expect(machine.timerFired(now: machine.nextDeadline!) == [.connect(server: 1)])
        _ = machine.infoReceived(info(), now: t(2))
        #expect(
            machine.pongReceived(now: t(2)) == [
                .report(.reconnected(server: "nats://10.0.0.2:4222", possiblyLostMessages: false))
            ])
    }
}

@Suite struct StateMachinePingTests {
    @Test func pingsEveryIntervalAndDropsAConnectionThatLeavesThemUnanswered() {
        var machine = connectedMachine()
        #expect(machine.timerFired(now: t(9.9)) == [])
        #expect(machine.timerFired(now: t(10)) == [sent("PING\r\n")])
        #expect(machine.timerFired(now: t(20)) == [sent("PING\r\n")])
        #expect(machine.timerFired(now: t(30)) == [.closeSocket, .report(.disconnected(.staleConnection))])
        #expect(!machine.isConnected)
    }

    @Test func aPONGClearsTheUnansweredPings() {
        var machine = connectedMachine()
        _ = machine.timerFired(now: t(10))
        _ = machine.timerFired(now: t(20))
        #expect(machine.pongReceived(now: t(21)) == [])
        #expect(machine.timerFired(now: t(30)) == [sent("PING\r\n")])
        #expect(machine.timerFired(now: t(40)) == [sent("PING\r\n")])
        #expect(machine.isConnected)
    }
}

@Suite struct StateMachineErrorTests {
    @Test func keepsTheConnectionOnAPermissionsViolation() {
        var machine = connectedMachine()
        let error = NATSServerError(message: "Permissions Violation for Publish to \"x\"")
        #expect(machine.errorReceived(error, now: t(1)) == [.report(.serverError(error))])
        #expect(machine.isConnected)
    }

    @Test(arguments: ["Stale Connection", "Slow Consumer", "Maximum Payload Violation", "Unknown Protocol Operation"])
    func reconnectsAfterAnErrorTheServerClosesOn(text: String) {
        var machine = connectedMachine()
        let error = NATSServerError(message: text)
        #expect(machine.errorReceived(error, now: t(1)) == [.closeSocket, .report(.disconnected(.server(error)))])
        #expect(plannedAttempt(machine, after: t(1)) != nil)
    }

    @Test func givesUpOnceEveryServerRefusedTheCredentialsTwiceInARow() {
        var machine = Machine(configuration: configuration(servers: 2), seed: 1)
        let refused = NATSServerError(message: "Authorization Violation")
        _ = machine.started(now: t(0))
        var now = t(0)
        for _ in 0..<3 {
            _ = machine.infoReceived(info(), now: now)
            #expect(machine.errorReceived(refused, now: now).first == .closeSocket)
            now = machine.nextDeadline!
            _ = machine.timerFired(now: now)
        }
        _ = machine.infoReceived(info(), now: now)
        #expect(machine.errorReceived(refused, now: now) == [.closeSocket, .report(.closed(.server(refused)))])
        #expect(machine.isClosed)
        #expect(machine.nextDeadline == nil)
    }

    @Test func aConfirmedConnectionStartsTheAuthorizationCountOver() {
        var machine = Machine(configuration: configuration(), seed: 1)
        let refused = NATSServerError(message: "Authorization Violation")
        _ = machine.started(now: t(0))
        _ = machine.infoReceived(info(), now: t(0))
        _ = machine.errorReceived(refused, now: t(0))
        _ = machine.timerFired(now: machine.nextDeadline!)
        _ = machine.infoReceived(info(), now: t(1))
        _ = machine.pongReceived(now: t(1))
        _ = machine.connectionLost(.connectionLost("reset"), now: t(2))
        _ = machine.timerFired(now: machine.nextDeadline!)
        _ = machine.infoReceived(info(), now: t(3))
        #expect(machine.errorReceived(refused, now: t(3)) == [.closeSocket, attemptFailed(0, .server(refused))])
        #expect(!machine.isClosed)
    }
}

@Suite struct StateMachinePublishTests {
    @Test func writesWhileConnectedAndHoldsWhileDisconnectedUntilTheConfirmingPONG() throws {
        var machine = Machine(configuration: configuration(), seed: 1)
        _ = machine.started(now: t(0))
        #expect(publish(&machine, payload: 3) == .pend)
        #expect(publish(&machine, payload: 1) == .pend)
        let handshake = try #require(sentText(machine.infoReceived(info(), now: t(0))))
        #expect(!handshake.contains("PUB"), "held publishes went out before the server accepted CONNECT")
        #expect(publish(&machine, payload: 1) == .pend)
        #expect(
            machine.pongReceived(now: t(0)) == [
                sent("PUB s 3\r\naaa\r\nPUB s 1\r\na\r\nPUB s 1\r\na\r\n"),
                .report(.connected(server: "nats://10.0.0.1:4222")),
            ])
        #expect(machine.pending.isEmpty)
        #expect(publish(&machine) == .write)
    }

    @Test func dropsBeyondThePendingBoundReportingOnlyTheFirstOfARun() {
        var machine = connectedMachine()
        _ = machine.connectionLost(.connectionLost("reset"), now: t(1))
        // Each publish of 1 byte to "s" encodes to 12 bytes: 8 fit in 100.
        for _ in 0..<8 { #expect(publish(&machine) == .pend) }
        #expect(publish(&machine) == .drop(.pendingBufferFull, reportLost: true))
        #expect(publish(&machine) == .drop(.pendingBufferFull, reportLost: false))
        #expect(machine.droppedPublishes == 2)
        _ = machine.timerFired(now: machine.nextDeadline!)
        _ = machine.infoReceived(info(), now: t(2))
        let actions = machine.pongReceived(now: t(2))
        #expect(actions.count == 2)
        #expect(actions.last == .report(.reconnected(server: "nats://10.0.0.1:4222", possiblyLostMessages: true)))
        // A new run of drops is reported again.
        _ = machine.connectionLost(.connectionLost("reset"), now: t(3))
        for _ in 0..<8 { _ = publish(&machine) }
        #expect(publish(&machine) == .drop(.pendingBufferFull, reportLost: true))
    }

    @Test func refusesPublishesWhileTheOutputIsOverTheHighWaterMark() {
        var machine = connectedMachine()
        #expect(publish(&machine, unsent: 999) == .write)
        #expect(publish(&machine, unsent: 1000) == .drop(.backpressure, reportLost: true))
        #expect(publish(&machine, unsent: 5000) == .drop(.backpressure, reportLost: false))
        #expect(publish(&machine, unsent: 10) == .write)
        #expect(publish(&machine, unsent: 1000) == .drop(.backpressure, reportLost: true))
    }

    @Test func rejectsAPayloadOverTheServersMaxPayload() {
        var machine = Machine(configuration: configuration(), seed: 1)
        _ = machine.started(now: t(0))
        _ = machine.infoReceived(info(maxPayload: 10), now: t(0))
        _ = machine.pongReceived(now: t(0))
        #expect(publish(&machine, payload: 10) == .write)
        #expect(publish(&machine, payload: 11) == .reject(.payloadTooLarge(size: 11, limit: 10)))
        // Still known while disconnected.
        _ = machine.connectionLost(.connectionLost("reset"), now: t(1))
        #expect(publish(&machine, payload: 11) == .reject(.payloadTooLarge(size: 11, limit: 10)))
    }

    @Test func dropsHeldPublishesLargerThanTheNewServerAccepts() {
        var machine = Machine(configuration: configuration(), seed: 1)
        _ = machine.started(now: t(0))
        #expect(publish(&machine, payload: 20) == .pend)
        _ = machine.infoReceived(info(maxPayload: 10), now: t(0))
        #expect(
            machine.pongReceived(now: t(0)) == [
                .report(.lost(.pendingOverServerLimit)), .report(.connected(server: "nats://10.0.0.1:4222")),
            ])
        #expect(machine.droppedPublishes == 1)
    }
}

@Suite struct StateMachineLossTests {
    private func reconnect(_ machine: inout Machine, at seconds: Double) -> [Action] {
        _ = machine.timerFired(now: machine.nextDeadline!)
        _ = machine.infoReceived(info(), now: t(seconds))
        return machine.pongReceived(now: t(seconds))
    }

    private let reconnectedClean = Action.report(
        .reconnected(server: "nats://10.0.0.1:4222", possiblyLostMessages: false))
    private let reconnectedLossy = Action.report(
        .reconnected(server: "nats://10.0.0.1:4222", possiblyLostMessages: true))

    @Test func saysNothingWasLostWhenEveryPublishWasConfirmedAndNobodySubscribed() {
        var machine = connectedMachine()
        _ = publish(&machine)
        _ = machine.timerFired(now: t(10)) // PING
        _ = machine.pongReceived(now: t(10.1)) // confirms the publish
        _ = machine.connectionLost(.connectionLost("reset"), now: t(11))
        #expect(reconnect(&machine, at: 12) == [reconnectedClean])
    }

    @Test func saysMessagesMayBeLostWhenAPublishWasUnconfirmed() {
        var machine = connectedMachine()
        _ = machine.timerFired(now: t(10))
        _ = publish(&machine) // after the PING: its PONG does not cover it
        _ = machine.pongReceived(now: t(10.1))
        _ = machine.connectionLost(.connectionLost("reset"), now: t(11))
        #expect(reconnect(&machine, at: 12) == [reconnectedLossy])
    }

    @Test func saysMessagesMayBeLostWhenASubscriptionExisted() throws {
        var machine = connectedMachine()
        _ = try machine.subscribeRequested(NATSSubscriptionID(1), subject: "a", queue: nil)
        _ = machine.connectionLost(.connectionLost("reset"), now: t(1))
        let actions = reconnect(&machine, at: 2)
        #expect(actions.last == reconnectedLossy)
        // The next outage without activity is judged on its own.
        _ = machine.unsubscribeRequested(NATSSubscriptionID(1))
        _ = machine.connectionLost(.connectionLost("reset"), now: t(3))
        #expect(reconnect(&machine, at: 4) == [reconnectedClean])
    }

    @Test func keepsHeldPublishesWhenAHandshakeFails() {
        var machine = Machine(configuration: configuration(), seed: 1)
        _ = machine.started(now: t(0))
        _ = publish(&machine)
        _ = machine.infoReceived(info(), now: t(0))
        #expect(
            machine.connectionLost(.connectionLost("reset"), now: t(0.5)) == [
                .closeSocket, attemptFailed(0, .connectionLost("reset")),
            ])
        #expect(machine.pendingCount == 1)
        #expect(machine.failedAttempts == 1)
    }
}

@Suite struct StateMachineSubscriptionTests {
    @Test func unsubscribesAfterAMaximumCountedAcrossReconnections() throws {
        var machine = connectedMachine()
        let sid = NATSSubscriptionID(1)
        _ = try machine.subscribeRequested(sid, subject: "a", queue: nil)
        #expect(machine.messageReceived(sid) == true)
        #expect(machine.unsubscribeRequested(sid, max: 3) == [sent("UNSUB 1 3\r\n")])
        #expect(machine.messageReceived(sid) == true)
        _ = machine.connectionLost(.connectionLost("reset"), now: t(1))
        _ = machine.timerFired(now: machine.nextDeadline!)
        let handshake = sentText(machine.infoReceived(info(), now: t(2))) ?? ""
        #expect(handshake.hasSuffix("SUB a 1\r\nUNSUB 1 1\r\nPING\r\n"))
        #expect(machine.messageReceived(sid) == true)
        #expect(!machine.isSubscribed(sid))
        #expect(machine.messageReceived(sid) == false)
    }

    @Test func ignoresMessagesForUnknownOrRemovedSubscriptions() throws {
        var machine = connectedMachine()
        #expect(machine.messageReceived(NATSSubscriptionID(9)) == false)
        _ = try machine.subscribeRequested(NATSSubscriptionID(1), subject: "a", queue: nil)
        #expect(machine.unsubscribeRequested(NATSSubscriptionID(1)) == [sent("UNSUB 1\r\n")])
        #expect(machine.messageReceived(NATSSubscriptionID(1)) == false)
        #expect(machine.unsubscribeRequested(NATSSubscriptionID(1)) == [])
    }
}

@Suite struct StateMachineCloseTests {
    @Test func drainsDeliveringWhatIsOnItsWayAndClosesAtThePONG() throws {
        var machine = connectedMachine()
        _ = try machine.subscribeRequested(NATSSubscriptionID(1), subject: "a", queue: nil)
        _ = try machine.subscribeRequested(NATSSubscriptionID(2), subject: "b", queue: nil)
        #expect(machine.closeRequested(now: t(1)) == [sent("UNSUB 1\r\nUNSUB 2\r\nPING\r\n")])
        #expect(machine.messageReceived(NATSSubscriptionID(2)) == true)
        #expect(publish(&machine) == .reject(.closed))
        #expect(throws: NATSError.closed) {
            try machine.subscribeRequested(NATSSubscriptionID(3), subject: "c", queue: nil)
        }
        #expect(machine.closeRequested(now: t(1)) == [])
        #expect(machine.pongReceived(now: t(1.1)) == [.closeSocket, .report(.closed(nil))])
        #expect(machine.isClosed)
        #expect(machine.nextDeadline == nil)
    }

    @Test func waitsForTheDrainsOwnPONGNotAnEarlierOne() {
        var machine = connectedMachine()
        #expect(machine.timerFired(now: t(10)) == [sent("PING\r\n")])
        _ = machine.closeRequested(now: t(10.5))
        #expect(machine.pongReceived(now: t(10.6)) == [])
        #expect(!machine.isClosed)
        #expect(machine.pongReceived(now: t(10.7)) == [.closeSocket, .report(.closed(nil))])
    }

    @Test func closesAtTheDrainDeadlineWithoutAPONG() {
        var machine = connectedMachine()
        _ = machine.closeRequested(now: t(1))
        #expect(machine.nextDeadline == t(6))
        #expect(machine.timerFired(now: t(6)) == [.closeSocket, .report(.closed(.drainTimedOut))])
    }

    @Test func closingWhileDisconnectedDropsTheHeldPublishesAndSaysSo() {
        var machine = connectedMachine()
        _ = machine.connectionLost(.connectionLost("reset"), now: t(1))
        _ = publish(&machine)
        _ = publish(&machine)
        #expect(machine.closeRequested(now: t(2)) == [.report(.lost(.closedWhilePending)), .report(.closed(nil))])
        #expect(machine.droppedPublishes == 2)
        #expect(machine.timerFired(now: t(100)) == [])
        #expect(machine.connectFailed(.connectTimedOut, now: t(100)) == [])
    }

    @Test func closingDuringAnAttemptClosesTheSocket() {
        var machine = Machine(configuration: configuration(), seed: 1)
        _ = machine.started(now: t(0))
        #expect(machine.closeRequested(now: t(0)) == [.closeSocket, .report(.closed(nil))])
    }

    @Test func aLostConnectionDuringTheDrainEndsIt() {
        var machine = connectedMachine()
        _ = machine.closeRequested(now: t(1))
        #expect(
            machine.connectionLost(.connectionLost("reset"), now: t(2)) == [
                .closeSocket, .report(.closed(.connectionLost("reset"))),
            ])
    }

    @Test func keepsALaterINFOWithoutActing() {
        var machine = connectedMachine()
        #expect(machine.infoReceived(info(maxPayload: 5), now: t(1)) == [])
        #expect(machine.serverInfo?.maxPayload == 5)
        #expect(machine.isConnected)
    }
}

@Suite struct StateMachineFlushTests {
    @Test func confirmsAFlushAtItsOwnPONGInOrder() {
        var machine = connectedMachine()
        #expect(machine.timerFired(now: t(10)) == [sent("PING\r\n")])
        #expect(machine.flushRequested(token: 7) == [sent("PING\r\n")])
        #expect(machine.pongReceived(now: t(10.1)) == [])
        #expect(machine.pongReceived(now: t(10.2)) == [.completeFlush(token: 7, confirmed: true)])
    }

    @Test func failsAFlushWithoutAConfirmedConnectionOrWhenItEnds() {
        var machine = Machine(configuration: configuration(), seed: 1)
        #expect(machine.flushRequested(token: 1) == [.completeFlush(token: 1, confirmed: false)])
        machine = connectedMachine()
        _ = machine.flushRequested(token: 2)
        #expect(
            machine.connectionLost(.connectionLost("reset"), now: t(1)) == [
                .closeSocket, .report(.disconnected(.connectionLost("reset"))),
                .completeFlush(token: 2, confirmed: false),
            ])
        // A flush asked before close() is still answered; one asked during the drain is not.
        machine = connectedMachine()
        _ = machine.flushRequested(token: 3)
        _ = machine.closeRequested(now: t(1))
        #expect(machine.flushRequested(token: 4) == [.completeFlush(token: 4, confirmed: false)])
        #expect(machine.pongReceived(now: t(1)) == [.completeFlush(token: 3, confirmed: true)])
        #expect(machine.pongReceived(now: t(1)) == [.closeSocket, .report(.closed(nil))])
    }
}

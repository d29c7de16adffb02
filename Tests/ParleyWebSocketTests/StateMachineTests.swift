import ParleyNet
import Testing

@testable import ParleyWebSocket

/// A mock clock: instants are seconds (and milliseconds) after an arbitrary origin.
private func t(_ seconds: Double) -> Instant { Instant(nanoseconds: 1_000_000_000_000 + UInt64(seconds * 1e9)) }

private func machine(
    maxMessageBytes: Int = 1 << 20, pingInterval: Duration? = .seconds(30),
    closeTimeout: Duration = .seconds(5)
) -> WebSocketConnectionStateMachine {
    var config = WebSocketConnectionStateMachine.Configuration()
    config.maxMessageBytes = maxMessageBytes
    config.pingInterval = pingInterval
    config.closeTimeout = closeTimeout
    return WebSocketConnectionStateMachine(configuration: config, now: t(0))
}

@Suite struct StateMachineMessageTests {
    @Test func deliversUnfragmentedTextAndBinary() {
        var sm = machine()
        #expect(sm.frameReceived(TestFrames.text("héllo"), now: t(1)) == [.deliverText("héllo")])
        #expect(
            sm.frameReceived(WebSocketFrame(opcode: .binary, payload: [0, 1, 255]), now: t(1)) == [
                .deliverBinary([0, 1, 255])
            ])
        #expect(sm.frameReceived(TestFrames.text(""), now: t(1)) == [.deliverText("")])
    }

    @Test func answersPingWithPongCarryingThePayload() {
        var sm = machine()
        #expect(
            sm.frameReceived(WebSocketFrame(opcode: .ping, payload: [1, 2, 3]), now: t(1)) == [.sendPong([1, 2, 3])])
        #expect(sm.frameReceived(WebSocketFrame(opcode: .pong, payload: [9]), now: t(1)) == .none)
    }

    @Test func reassemblesFragmentsWithControlFramesInterleaved() {
        var sm = machine()
        #expect(sm.frameReceived(TestFrames.text("Hel", fin: false), now: t(1)) == .none)
        #expect(sm.frameReceived(WebSocketFrame(opcode: .ping, payload: [7]), now: t(1)) == [.sendPong([7])])
        #expect(sm.frameReceived(TestFrames.continuation("lo ", fin: false), now: t(1)) == .none)
        #expect(sm.frameReceived(WebSocketFrame(opcode: .pong), now: t(1)) == .none)
        #expect(sm.frameReceived(TestFrames.continuation("wörld"), now: t(1)) == [.deliverText("Hello wörld")])
        // The next message starts afresh.
        #expect(sm.frameReceived(WebSocketFrame(fin: false, opcode: .binary, payload: [1]), now: t(2)) == .none)
        #expect(sm.frameReceived(TestFrames.continuation([2], fin: false), now: t(2)) == .none)
        #expect(sm.frameReceived(TestFrames.continuation([]), now: t(2)) == [.deliverBinary([1, 2])])
    }

    @Test func reassemblesAMultiByteCharacterSplitAcrossFragments() {
        var sm = machine()
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        #expect(
            sm.frameReceived(WebSocketFrame(fin: false, opcode: .text, payload: [0x41, euro[0]]), now: t(1)) == .none)
        #expect(sm.frameReceived(TestFrames.continuation([euro[1]], fin: false), now: t(1)) == .none)
        #expect(sm.frameReceived(TestFrames.continuation([euro[2]]), now: t(1)) == [.deliverText("A€")])
    }

    @Test func failsFastWith1007OnInvalidUTF8SplitAcrossFragments() {
        var sm = machine()
        // κόσμε + F4 | 90 80 80: the fragment holding 0x90 is refused, before the message ends.
        #expect(
            sm.frameReceived(
                WebSocketFrame(fin: false, opcode: .text, payload: Array("κόσμε".utf8) + [0xF4]), now: t(1)) == .none)
        let actions = sm.frameReceived(TestFrames.continuation([0x90], fin: false), now: t(1))
        #expect(actions == [.sendClose(.invalidPayload, reason: "text message is not valid UTF-8")])
        #expect(!sm.canSendData)
    }

    @Test func refusesWith1007ATextMessageEndingInsideACharacter() {
        var sm = machine()
        #expect(sm.frameReceived(WebSocketFrame(fin: false, opcode: .text, payload: [0x41]), now: t(1)) == .none)
        let actions = sm.frameReceived(TestFrames.continuation([0xE2, 0x82]), now: t(1))
        #expect(actions.first { if case .sendClose(.invalidPayload, _) = $0 { true } else { false } } != nil)
    }

    @Test func refusesWith1007AnInvalidUnfragmentedText() {
        var sm = machine()
        let actions = sm.frameReceived(WebSocketFrame(opcode: .text, payload: [0xED, 0xA0, 0x80]), now: t(1))
        #expect(actions == [.sendClose(.invalidPayload, reason: "text message is not valid UTF-8")])
    }

    @Test func refusesWith1009AMessageTooBigAcrossFragments() {
        var sm = machine(maxMessageBytes: 10)
        #expect(
            sm.frameReceived(WebSocketFrame(fin: false, opcode: .binary, payload: TestFrames.payload(6)), now: t(1))
                == .none)
        #expect(sm.frameReceived(TestFrames.continuation(TestFrames.payload(4), fin: false), now: t(1)) == .none)
        let actions = sm.frameReceived(TestFrames.continuation([1]), now: t(1))
        #expect(actions == [.sendClose(.messageTooBig, reason: "message over 10 bytes")])
    }

    @Test func refusesWith1009AnUnfragmentedMessageOverTheLimit() {
        var sm = machine(maxMessageBytes: 10)
        #expect(
            sm.frameReceived(WebSocketFrame(opcode: .binary, payload: TestFrames.payload(10)), now: t(1)).count == 1)
        #expect(
            sm.frameReceived(WebSocketFrame(opcode: .binary, payload: TestFrames.payload(11)), now: t(1))
                == [.sendClose(.messageTooBig, reason: "message over 10 bytes")])
    }

    @Test func refusesWith1002AContinuationWithoutAStart() {
        var sm = machine()
        #expect(
            sm.frameReceived(TestFrames.continuation("x"), now: t(1))
                == [.sendClose(.protocolError, reason: "continuation frame without a message to continue")])
    }

    @Test func refusesWith1002ANewDataFrameInsideAFragmentedMessage() {
        var sm = machine()
        _ = sm.frameReceived(TestFrames.text("a", fin: false), now: t(1))
        #expect(
            sm.frameReceived(TestFrames.text("b"), now: t(1))
                == [.sendClose(.protocolError, reason: "new data frame while a fragmented message is in progress")])
    }
}

@Suite struct StateMachineCloseTests {
    @Test func echoesThePeersCloseCodeAndClosesTCP() {
        var sm = machine()
        #expect(
            sm.frameReceived(TestFrames.close(1000, "bye"), now: t(1)) == [
                .sendClose(.normalClosure, reason: ""), .closeTransport,
            ])
        #expect(!sm.canSendData)
        #expect(sm.isClosed)
        #expect(sm.closeCodeForApplication.code == .normalClosure)
        #expect(sm.closeCodeForApplication.reason == "bye")
        // Anything after the peer's Close is ignored.
        #expect(sm.frameReceived(TestFrames.text("late"), now: t(2)) == .none)
    }

    @Test func answersAnEmptyCloseWith1000() {
        var sm = machine()
        #expect(
            sm.frameReceived(TestFrames.close(nil), now: t(1)) == [
                .sendClose(.normalClosure, reason: ""), .closeTransport,
            ])
        #expect(sm.closeCodeForApplication.code == .noStatusReceived)
    }

    @Test(arguments: [
        UInt16(1000), 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999,
    ])
    func echoesEveryValidCloseCode(code: UInt16) {
        var sm = machine()
        #expect(
            sm.frameReceived(TestFrames.close(code), now: t(1)) == [
                .sendClose(WebSocketCloseCode(code), reason: ""), .closeTransport,
            ])
    }

    @Test(arguments: [UInt16(0), 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535])
    func refusesInvalidCloseCodesWith1002(code: UInt16) {
        var sm = machine()
        #expect(
            sm.frameReceived(TestFrames.close(code), now: t(1))
                == [.sendClose(.protocolError, reason: "invalid close code \(code)"), .closeTransport])
    }

    @Test func refusesAOneByteClosePayloadWith1002() {
        var sm = machine()
        #expect(
            sm.frameReceived(WebSocketFrame(opcode: .close, payload: [0x03]), now: t(1))
                == [.sendClose(.protocolError, reason: "close payload of one byte"), .closeTransport])
    }

    @Test func refusesACloseReasonThatIsNotUTF8With1007() {
        var sm = machine()
        let frame = WebSocketFrame(opcode: .close, payload: [0x03, 0xE8, 0xCE, 0xBA, 0xED, 0xA0, 0x80])
        #expect(
            sm.frameReceived(frame, now: t(1)) == [
                .sendClose(.invalidPayload, reason: "close reason is not valid UTF-8"), .closeTransport,
            ])
    }

    @Test func serverInitiatedCloseWaitsForThePeersClose() {
        var sm = machine()
        #expect(
            sm.closeRequested(code: .goingAway, reason: "server shutting down", now: t(1))
                == [.sendClose(.goingAway, reason: "server shutting down")])
        #expect(!sm.canSendData)
        #expect(sm.nextDeadline == t(6))
        // Data and pings from the peer after our Close are discarded (§5.5.1).
        #expect(sm.frameReceived(TestFrames.text("still talking"), now: t(2)) == .none)
        #expect(sm.frameReceived(WebSocketFrame(opcode: .ping), now: t(2)) == .none)
        #expect(sm.closeRequested(code: .normalClosure, reason: "", now: t(2)) == .none)
        #expect(sm.frameReceived(TestFrames.close(1001), now: t(3)) == [.closeTransport])
        #expect(sm.closeCodeForApplication.code == .goingAway)
    }

    @Test func dropsTheConnectionWhenThePeerNeverAnswersOurClose() {
        var sm = machine(closeTimeout: .seconds(5))
        _ = sm.closeRequested(code: .normalClosure, reason: "", now: t(10))
        #expect(sm.timerFired(now: t(14.9)) == .none)
        #expect(sm.timerFired(now: t(15)) == [.dropTransport])
        #expect(sm.isClosed)
    }

    @Test func aProtocolErrorSendsCloseThenWaitsForThePeersClose() {
        var sm = machine()
        #expect(
            sm.parseFailed(.protocolViolation("unmasked client frame"), now: t(1))
                == [.sendClose(.protocolError, reason: "unmasked client frame")])
        #expect(sm.frameReceived(TestFrames.close(1002), now: t(1.1)) == [.closeTransport])
        #expect(sm.closeCodeForApplication.code == .protocolError)
    }

    @Test func aSecondErrorWhileClosingClosesTCPAtOnce() {
        var sm = machine()
        _ = sm.parseFailed(.protocolViolation("reserved opcode 3"), now: t(1))
        #expect(sm.parseFailed(.protocolViolation("reserved opcode 4"), now: t(1)) == [.closeTransport])
    }

    @Test func overflowClosesWith4000() {
        var sm = machine()
        #expect(sm.outgoingQueueOverflowed(now: t(1)) == [.sendClose(.slowConsumer, reason: "outgoing queue overflow")])
        #expect(sm.timerFired(now: t(6)) == [.dropTransport])
        #expect(sm.closeCodeForApplication.code == .slowConsumer)
    }

    @Test func reportsAbnormalClosureWhenTCPEndsWithoutAClose() {
        var sm = machine()
        _ = sm.frameReceived(TestFrames.text("x", fin: false), now: t(1))
        sm.transportClosed()
        #expect(sm.closeCodeForApplication.code == .abnormalClosure)
        #expect(sm.nextDeadline == nil)
    }
}

@Suite struct StateMachineHeartbeatTests {
    @Test func pingsAnIdlePeerAndDropsItAfterTwoMissedPongs() {
        var sm = machine(pingInterval: .seconds(30))
        #expect(sm.nextDeadline == t(30))
        #expect(sm.timerFired(now: t(29.9)) == .none)
        #expect(sm.timerFired(now: t(30)) == [.sendPing([0, 0, 0, 1])])
        #expect(sm.nextDeadline == t(60))
        #expect(sm.timerFired(now: t(45)) == .none)
        #expect(sm.timerFired(now: t(60)) == [.sendPing([0, 0, 0, 2])])
        #expect(
            sm.timerFired(now: t(90)) == [.sendClose(.heartbeatTimeout, reason: "heartbeat timeout"), .dropTransport])
        #expect(sm.isClosed)
        #expect(sm.closeCodeForApplication.code == .heartbeatTimeout)
    }

    @Test func aPongResetsTheCount() {
        var sm = machine(pingInterval: .seconds(30))
        #expect(sm.timerFired(now: t(30)) == [.sendPing([0, 0, 0, 1])])
        #expect(sm.frameReceived(WebSocketFrame(opcode: .pong, payload: [0, 0, 0, 1]), now: t(31)) == .none)
        #expect(sm.timerFired(now: t(60)) == .none)
        #expect(sm.nextDeadline == t(61))
        #expect(sm.timerFired(now: t(61)) == [.sendPing([0, 0, 0, 2])])
        #expect(sm.timerFired(now: t(91)) == [.sendPing([0, 0, 0, 3])])
        #expect(sm.timerFired(now: t(121)).count == 2)
    }

    @Test func doesNotPingAPeerThatKeepsTalking() {
        var sm = machine(pingInterval: .seconds(30))
        for second in stride(from: 10.0, through: 300, by: 10) {
            _ = sm.frameReceived(TestFrames.text("tick"), now: t(second))
            #expect(sm.timerFired(now: t(second + 5)) == .none)
        }
        #expect(sm.nextDeadline == t(330))
    }

    @Test func heartbeatsCanBeTurnedOff() {
        var sm = machine(pingInterval: nil)
        #expect(sm.nextDeadline == nil)
        #expect(sm.timerFired(now: t(10_000)) == .none)
    }
}

/// A probe: the application asks whether the peer is still there (a newer socket of its session came in).
@Suite struct StateMachineProbeTests {
    @Test func aPeerThatAnswersAProbeStaysOpen() {
        var sm = machine(pingInterval: .seconds(30))
        #expect(sm.probe(within: .seconds(10), now: t(5)) == [.sendPing([0, 0, 0, 1])])
        #expect(sm.nextDeadline == t(15))
        #expect(sm.frameReceived(WebSocketFrame(opcode: .pong, payload: [0, 0, 0, 1]), now: t(6)) == .none)
        // Answered: the next deadline is the heartbeat's again, and nothing closes at the probe's.
        #expect(sm.nextDeadline == t(36))
        #expect(sm.timerFired(now: t(15)) == .none)
        #expect(!sm.isClosed)
        #expect(sm.timerFired(now: t(36)) == [.sendPing([0, 0, 0, 2])])
    }

    @Test func anyFrameAnswersAProbe() {
        var sm = machine(pingInterval: .seconds(30))
        _ = sm.probe(within: .seconds(10), now: t(5))
        #expect(sm.frameReceived(TestFrames.text("still here"), now: t(14)) == [.deliverText("still here")])
        #expect(sm.timerFired(now: t(15)) == .none)
        #expect(!sm.isClosed)
    }

    @Test func aSilentPeerIsDroppedAtTheProbesDeadlineAsAMissedHeartbeat() {
        var sm = machine(pingInterval: .seconds(30))
        _ = sm.frameReceived(TestFrames.text("hi"), now: t(20))
        #expect(sm.probe(within: .seconds(10), now: t(21)) == [.sendPing([0, 0, 0, 1])])
        #expect(sm.nextDeadline == t(31))
        #expect(sm.timerFired(now: t(30.9)) == .none)
        #expect(
            sm.timerFired(now: t(31)) == [
                .sendClose(.heartbeatTimeout, reason: "no answer to a liveness probe"), .dropTransport,
            ])
        #expect(sm.isClosed)
        #expect(sm.closeCodeForApplication.code == .heartbeatTimeout)
        #expect(sm.nextDeadline == nil)
    }

    @Test func aSecondProbeKeepsTheFirstsEarlierDeadlineAndSendsNoSecondPing() {
        var sm = machine(pingInterval: .seconds(30))
        _ = sm.probe(within: .seconds(10), now: t(5))
        #expect(sm.probe(within: .seconds(10), now: t(8)) == .none)
        #expect(sm.nextDeadline == t(15))
        // A shorter one moves the deadline earlier, with a ping of its own.
        #expect(sm.probe(within: .seconds(2), now: t(9)) == [.sendPing([0, 0, 0, 2])])
        #expect(sm.nextDeadline == t(11))
        #expect(sm.timerFired(now: t(11)).count == 2)
        #expect(sm.isClosed)
    }

    @Test func aProbeWorksWithHeartbeatsOffAndIsIgnoredOnceClosing() {
        var sm = machine(pingInterval: nil)
        #expect(sm.probe(within: .seconds(10), now: t(1)) == [.sendPing([0, 0, 0, 1])])
        #expect(sm.nextDeadline == t(11))
        #expect(sm.timerFired(now: t(11)).count == 2)

        var closing = machine(pingInterval: .seconds(30))
        _ = closing.closeRequested(code: .normalClosure, reason: "", now: t(1))
        #expect(closing.probe(within: .seconds(10), now: t(2)) == .none)
        #expect(closing.nextDeadline == t(6))
    }

    @Test func aProbeLongerThanTheHeartbeatStillEndsAtItsOwnDeadline() {
        var sm = machine(pingInterval: .seconds(30))
        #expect(sm.probe(within: .seconds(60), now: t(5)) == [.sendPing([0, 0, 0, 1])])
        #expect(sm.nextDeadline == t(35))
        // The heartbeat goes on meanwhile (one ping unanswered: not yet its limit)...
        #expect(sm.timerFired(now: t(35)) == [.sendPing([0, 0, 0, 2])])
        #expect(sm.nextDeadline == t(65))
        // ...and the probe's deadline closes the silent peer.
        #expect(
            sm.timerFired(now: t(65)) == [
                .sendClose(.heartbeatTimeout, reason: "no answer to a liveness probe"), .dropTransport,
            ])
    }

    @Test func anAnsweredProbeResetsTheMissedPongCount() {
        var sm = machine(pingInterval: .seconds(30))
        // A heartbeat ping unanswered, then a probe answered in time: the peer is alive and the count starts over.
        #expect(sm.timerFired(now: t(30)) == [.sendPing([0, 0, 0, 1])])
        _ = sm.probe(within: .seconds(10), now: t(40))
        _ = sm.frameReceived(WebSocketFrame(opcode: .pong, payload: [0, 0, 0, 2]), now: t(41))
        #expect(sm.timerFired(now: t(71)) == [.sendPing([0, 0, 0, 3])])
        #expect(sm.timerFired(now: t(101)) == [.sendPing([0, 0, 0, 4])])
        #expect(!sm.isClosed)
    }
}

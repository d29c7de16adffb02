import ParleyNet
import Testing

@testable import ParleyHTTP

/// `HTTPConnectionStateMachine` as event -> action sequences: no socket, no parser, a hand-driven clock.

/// A mock clock: instants are seconds after an arbitrary origin.
private func t(_ seconds: Double) -> Instant { Instant(nanoseconds: 1_000_000_000_000 + UInt64(seconds * 1e9)) }

private let maxPendingOutput = 1 << 20
private let maxPipelinedInput = 64 * 1024

private func machine(at now: Instant = t(0)) -> HTTPConnectionStateMachine {
    HTTPConnectionStateMachine(
        configuration: .init(
            headerTimeout: .seconds(10), idleTimeout: .seconds(60), writeTimeout: .seconds(60),
            maxPendingOutputBytes: maxPendingOutput, maxPipelinedInputBytes: maxPipelinedInput),
        now: now)
}

private func head(
    _ path: String = "/", version: HTTPVersion = .http1_1, keepAlive: Bool = true,
    expectContinue: Bool = false, framing: HTTPBodyFraming = .none
) -> HTTPRequestHead {
    HTTPRequestHead(
        method: .GET, target: path, path: path, version: version, keepAlive: keepAlive,
        expectContinue: expectContinue, framing: framing)
}

extension HTTPConnectionStateMachine {
    /// A complete request without a body arrives at `now` and is dispatched.
    mutating func receiveRequest(at now: Instant, streamed: Bool = false) {
        #expect(bytesReceived(now: now) == .parse)
        #expect(acceptsInput(pendingOutputBytes: 0))
        if streamed {
            #expect(
                headReceived(head(), bodyLimit: 1 << 20, streamed: true, now: now)
                    == .dispatchWithBodyStream(sendContinue: false)
            )
            #expect(requestEnded() == .finishBodyStream)
        } else {
            #expect(
                headReceived(head(), bodyLimit: 1 << 20, streamed: false, now: now) == .readBody(sendContinue: false))
            #expect(requestEnded() == .dispatch)
        }
        #expect(state == .awaitingResponse)
    }

    mutating func answer(
        keepAlive: Bool = true, closes: Bool = false, upgrade: Bool = false,
        bufferedInputBytes: Int = 0, at now: Instant
    ) -> ResponseAction {
        responseReady(
            requestKeepAlive: keepAlive, responseCloses: closes, upgrade: upgrade,
            bufferedInputBytes: bufferedInputBytes, now: now)
    }
}

@Suite struct HTTPConnectionRequestTests {
    @Test func simpleRequestIsDispatchedAnsweredAndTheConnectionWaitsForTheNext() {
        var sm = machine()
        #expect(sm.state == .idle)
        #expect(sm.interest(pendingOutputBytes: 0, bufferedInputBytes: 0) == .readable)
        #expect(sm.bytesReceived(now: t(1)) == .parse)
        #expect(sm.state == .readingHead(since: t(1)))
        #expect(
            sm.headReceived(head(), bodyLimit: 1 << 20, streamed: false, now: t(1)) == .readBody(sendContinue: false))
        #expect(sm.bodyReceived(byteCount: 10) == .buffer)
        #expect(sm.requestEnded() == .dispatch)
        #expect(sm.lastActivity == t(1))
        // The handler runs: no further input is parsed meanwhile.
        #expect(!sm.acceptsInput(pendingOutputBytes: 0))
        #expect(sm.answer(at: t(2)) == .write)
        #expect(sm.state == .idle)
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .none)
        #expect(sm.interest(pendingOutputBytes: 0, bufferedInputBytes: 0) == .readable)
    }

    @Test func keepAliveServesOneRequestAfterAnother() {
        var sm = machine()
        for i in 0..<3 {
            sm.receiveRequest(at: t(Double(i)))
            #expect(sm.answer(at: t(Double(i) + 0.5)) == .write)
            #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .none)
            #expect(sm.state == .idle)
        }
    }

    @Test func connectionCloseFromTheRequestOrTheAnswerClosesOnceTheAnswerIsOut() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        #expect(sm.answer(keepAlive: false, at: t(1)) == .writeThenClose(failBodyStream: false))
        // Still writing: no more reading (nor watching for the peer's half-close), writable interest only.
        #expect(sm.interest(pendingOutputBytes: 100, bufferedInputBytes: 0) == [.writable, .ignoringPeerHalfClose])
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)

        var other = machine()
        other.receiveRequest(at: t(1))
        #expect(other.answer(closes: true, at: t(1)) == .writeThenClose(failBodyStream: false))
        #expect(other.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }

    @Test func pipelinedRequestWaitsUntilTheFirstAnswerIsWritten() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        // The second request's bytes arrive with or after the first: read, not parsed.
        #expect(sm.bytesReceived(now: t(1)) == .parse)
        #expect(!sm.acceptsInput(pendingOutputBytes: 0))
        #expect(sm.answer(bufferedInputBytes: 40, at: t(2)) == .write)
        // Its head has started: the header timeout runs from the answer.
        #expect(sm.state == .readingHead(since: t(2)))
        // The answer is not out yet: the next request waits.
        #expect(!sm.acceptsInput(pendingOutputBytes: 500))
        #expect(sm.outputDrained(bufferedInputBytes: 40, now: t(0)) == .processBufferedInput)
        #expect(sm.acceptsInput(pendingOutputBytes: 0))
        #expect(
            sm.headReceived(head("/second"), bodyLimit: 1 << 20, streamed: false, now: t(3))
                == .readBody(sendContinue: false))
        #expect(sm.requestEnded() == .dispatch)
    }

    @Test func inputPipelinedBehindARequestBeingAnsweredIsBounded() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        #expect(sm.wantsToRead(pendingOutputBytes: 0, bufferedInputBytes: maxPipelinedInput))
        #expect(!sm.wantsToRead(pendingOutputBytes: 0, bufferedInputBytes: maxPipelinedInput + 1))
        #expect(sm.answer(bufferedInputBytes: maxPipelinedInput + 1, at: t(2)) == .write)
        // Answered: the pipelined bytes are the next request's, which is read as usual.
        #expect(sm.wantsToRead(pendingOutputBytes: 0, bufferedInputBytes: maxPipelinedInput + 1))
    }

    @Test func outputBackpressureStopsReadingUntilTheOutputShrinks() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        #expect(sm.answer(at: t(1)) == .write)
        #expect(sm.interest(pendingOutputBytes: maxPendingOutput, bufferedInputBytes: 0) == [.readable, .writable])
        #expect(sm.interest(pendingOutputBytes: maxPendingOutput + 1, bufferedInputBytes: 0) == .writable)
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .none)
        #expect(sm.interest(pendingOutputBytes: 0, bufferedInputBytes: 0) == .readable)
    }

    @Test func parseErrorIsAnsweredAndTheConnectionClosesAfterIt() {
        var sm = machine()
        #expect(sm.bytesReceived(now: t(1)) == .parse)
        #expect(sm.parseFailed() == .answerErrorThenClose)
        #expect(sm.bytesReceived(now: t(1)) == .discard)
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }

    @Test func answerForAConnectionClosedMeanwhileIsDropped() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        sm.connectionClosed()
        #expect(sm.isClosed)
        #expect(sm.answer(at: t(2)) == .discard)
        #expect(sm.interest(pendingOutputBytes: 0, bufferedInputBytes: 0) == [])
    }
}

@Suite struct HTTPConnectionBodyTests {
    @Test func expectContinueIsAnsweredOnlyWhenTheBodyWillBeRead() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        let fits = head(expectContinue: true, framing: .contentLength(100))
        #expect(sm.headReceived(fits, bodyLimit: 100, streamed: false, now: t(1)) == .readBody(sendContinue: true))

        // RFC 9110 §10.1.1: a body over the limit gets the parser's 413, not a 100 first.
        var tooBig = machine()
        _ = tooBig.bytesReceived(now: t(1))
        let over = head(expectContinue: true, framing: .contentLength(101))
        #expect(tooBig.headReceived(over, bodyLimit: 100, streamed: false, now: t(1)) == .readBody(sendContinue: false))
        #expect(tooBig.parseFailed() == .answerErrorThenClose)

        // HTTP/1.0 has no 100 Continue.
        var old = machine()
        _ = old.bytesReceived(now: t(1))
        let http10 = head(version: .http1_0, expectContinue: true, framing: .contentLength(10))
        #expect(old.headReceived(http10, bodyLimit: 100, streamed: false, now: t(1)) == .readBody(sendContinue: false))

        // A chunked body has no declared length to refuse up front.
        var chunked = machine()
        _ = chunked.bytesReceived(now: t(1))
        let streamedHead = head(expectContinue: true, framing: .chunked)
        #expect(
            chunked.headReceived(streamedHead, bodyLimit: 100, streamed: true, now: t(1))
                == .dispatchWithBodyStream(sendContinue: true))
    }

    @Test func streamedBodyPausesReadingWhileItsConsumerIsBehind() {
        var sm = machine()
        #expect(sm.bytesReceived(now: t(1)) == .parse)
        #expect(
            sm.headReceived(head(framing: .chunked), bodyLimit: 1 << 20, streamed: true, now: t(1))
                == .dispatchWithBodyStream(sendContinue: false))
        #expect(sm.bodyReceived(byteCount: 10) == .stream)
        sm.bodyConsumerFellBehind()
        #expect(sm.interest(pendingOutputBytes: 0, bufferedInputBytes: 0) == [])
        // Bytes already read are still parsed into the stream; only the socket waits.
        #expect(sm.acceptsInput(pendingOutputBytes: 0))
        #expect(sm.bodyConsumerCaughtUp(pendingOutputBytes: 0, bufferedInputBytes: 0) == .none)
        #expect(sm.interest(pendingOutputBytes: 0, bufferedInputBytes: 0) == .readable)
        sm.bodyConsumerFellBehind()
        #expect(sm.bodyConsumerCaughtUp(pendingOutputBytes: 0, bufferedInputBytes: 300) == .processBufferedInput)
        #expect(sm.requestEnded() == .finishBodyStream)
        #expect(sm.state == .awaitingResponse)
        // A late resume, after the body ended, starts nothing: the next request waits for this answer.
        #expect(sm.bodyConsumerCaughtUp(pendingOutputBytes: 0, bufferedInputBytes: 300) == .none)
        #expect(sm.answer(at: t(2)) == .write)
    }

    @Test func answerBeforeTheStreamedBodyEndedFailsTheStreamAndCloses() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        _ = sm.headReceived(head(framing: .contentLength(1000)), bodyLimit: 1 << 20, streamed: true, now: t(1))
        #expect(sm.answer(at: t(2)) == .writeThenClose(failBodyStream: true))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }

    @Test func parseErrorInAStreamedBodyIsTheHandlersToAnswer() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        _ = sm.headReceived(head(framing: .chunked), bodyLimit: 10, streamed: true, now: t(1))
        #expect(sm.parseFailed() == .failBodyStreamThenCloseAfterResponse)
        #expect(!sm.wantsToRead(pendingOutputBytes: 0, bufferedInputBytes: 0))
        #expect(!sm.acceptsInput(pendingOutputBytes: 0))
        // Output drained before the answer (a 100 Continue, say) does not close yet.
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .none)
        #expect(sm.answer(at: t(2)) == .writeThenClose(failBodyStream: false))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }
}

@Suite struct HTTPConnectionHalfCloseTests {
    @Test func peerHalfClosedWhileARequestIsInFlightStillGetsTheAnswer() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        // A hangup now may be a half-close, to be read and decided on; once closing, a hangup is the end.
        #expect(sm.isServingRequests)
        #expect(sm.peerHalfClosed(pendingOutputBytes: 0) == .closeAfterAnswer(failBodyStream: false))
        #expect(!sm.isServingRequests)
        // Nothing to watch until the answer: the half-close, level-triggered, would wake the loop on every wait.
        #expect(sm.interest(pendingOutputBytes: 0, bufferedInputBytes: 0) == .ignoringPeerHalfClose)
        #expect(sm.answer(at: t(2)) == .writeThenClose(failBodyStream: false))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }

    @Test func peerHalfClosedWhileIdleCloses() {
        var sm = machine()
        #expect(sm.peerHalfClosed(pendingOutputBytes: 0) == .close)

        // Also with an unfinished request: it can never be completed.
        var partial = machine()
        _ = partial.bytesReceived(now: t(1))
        #expect(partial.peerHalfClosed(pendingOutputBytes: 0) == .close)
    }

    @Test func peerHalfClosedWhileAnAnswerIsStillBeingWrittenGetsTheRestOfIt() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        #expect(sm.answer(at: t(1)) == .write)
        #expect(sm.peerHalfClosed(pendingOutputBytes: 5000) == .closeAfterAnswer(failBodyStream: false))
        #expect(sm.interest(pendingOutputBytes: 5000, bufferedInputBytes: 0) == [.writable, .ignoringPeerHalfClose])
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }

    @Test func peerHalfClosedDuringAStreamedBodyFailsTheStream() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        _ = sm.headReceived(head(framing: .contentLength(1000)), bodyLimit: 1 << 20, streamed: true, now: t(1))
        #expect(sm.peerHalfClosed(pendingOutputBytes: 0) == .closeAfterAnswer(failBodyStream: true))
        #expect(sm.answer(at: t(2)) == .writeThenClose(failBodyStream: false))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }
}

@Suite struct HTTPConnectionUpgradeTests {
    @Test func upgradeHandsTheConnectionToItsHandler() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        #expect(sm.answer(upgrade: true, at: t(1)) == .writeThenUpgrade)
        #expect(sm.isUpgraded)
        #expect(sm.bytesReceived(now: t(2)) == .deliverToUpgradeHandler)
        #expect(!sm.acceptsInput(pendingOutputBytes: 0))
        // No HTTP deadline applies any more (the upgraded protocol has its own heartbeat).
        #expect(sm.sweep(now: t(1000), pendingOutputBytes: 0) == .none)
        #expect(sm.peerHalfClosed(pendingOutputBytes: 0) == .close)
    }

    @Test func upgradeHandlersWritesAreBackpressuredUntilTheOutputDrains() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        #expect(sm.answer(upgrade: true, at: t(1)) == .writeThenUpgrade)
        let acceptedAtTheMark = sm.upgradeHandlerWrote(pendingOutputBytes: maxPendingOutput)
        #expect(acceptedAtTheMark)
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .none)
        let acceptedPastTheMark = sm.upgradeHandlerWrote(pendingOutputBytes: maxPendingOutput + 1)
        #expect(!acceptedPastTheMark)
        #expect(!sm.wantsToRead(pendingOutputBytes: maxPendingOutput + 1, bufferedInputBytes: 0))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .notifyUpgradeHandlerWritable)
        // Told once.
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .none)
    }

    @Test func upgradeHandlerPausesReadingAndClosesAfterAFlush() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        _ = sm.answer(upgrade: true, at: t(1))
        sm.upgradeHandlerPausedReading(true)
        #expect(sm.interest(pendingOutputBytes: 0, bufferedInputBytes: 0) == [])
        // A body stream's late "caught up" is not the upgrade handler's resume.
        #expect(sm.bodyConsumerCaughtUp(pendingOutputBytes: 0, bufferedInputBytes: 0) == .none)
        #expect(sm.interest(pendingOutputBytes: 0, bufferedInputBytes: 0) == [])
        sm.upgradeHandlerPausedReading(false)
        #expect(sm.interest(pendingOutputBytes: 0, bufferedInputBytes: 0) == .readable)
        #expect(sm.upgradeHandlerClosed(flush: true, pendingOutputBytes: 0) == .close)

        var flushing = machine()
        flushing.receiveRequest(at: t(1))
        _ = flushing.answer(upgrade: true, at: t(1))
        #expect(flushing.upgradeHandlerClosed(flush: true, pendingOutputBytes: 10) == .closeAfterOutput)
        #expect(
            flushing.interest(pendingOutputBytes: 10, bufferedInputBytes: 0) == [.writable, .ignoringPeerHalfClose])
        #expect(flushing.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
        var unflushed = machine()
        unflushed.receiveRequest(at: t(1))
        _ = unflushed.answer(upgrade: true, at: t(1))
        #expect(unflushed.upgradeHandlerClosed(flush: false, pendingOutputBytes: 10) == .close)
    }
}

@Suite struct HTTPConnectionTimeoutTests {
    @Test func headThatDoesNotArriveInTimeIsAnswered408() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        // More bytes of the same head do not restart the clock.
        _ = sm.bytesReceived(now: t(9))
        #expect(sm.sweep(now: t(10.9), pendingOutputBytes: 0) == .none)
        #expect(
            sm.sweep(now: t(11.1), pendingOutputBytes: 0) == .answerRequestTimeoutThenClose(.head))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }

    @Test func bodyThatStopsArrivingIsAnswered408AfterTheIdleTimeout() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        _ = sm.headReceived(head(framing: .contentLength(100)), bodyLimit: 1 << 20, streamed: false, now: t(1))
        _ = sm.bytesReceived(now: t(30))
        #expect(sm.sweep(now: t(89), pendingOutputBytes: 0) == .none)
        #expect(
            sm.sweep(now: t(91), pendingOutputBytes: 0) == .answerRequestTimeoutThenClose(.bodyIdle))
    }

    @Test func idleKeepAliveConnectionClosesAfterTheIdleTimeoutCountedFromTheAnswer() {
        var sm = machine()
        #expect(sm.sweep(now: t(59), pendingOutputBytes: 0) == .none)
        sm.receiveRequest(at: t(1))
        // A slow handler: no deadline while it runs.
        #expect(sm.sweep(now: t(100), pendingOutputBytes: 0) == .none)
        #expect(sm.answer(at: t(100)) == .write)
        #expect(sm.sweep(now: t(159), pendingOutputBytes: 0) == .none)
        #expect(sm.sweep(now: t(161), pendingOutputBytes: 0) == .close)
    }

    @Test func peerThatStopsTakingTheAnswerIsDroppedAfterTheWriteTimeout() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        #expect(sm.answer(at: t(2)) == .write)
        sm.bytesSent(now: t(30))
        #expect(sm.sweep(now: t(89), pendingOutputBytes: 4096) == .none)
        #expect(sm.sweep(now: t(91), pendingOutputBytes: 4096) == .close)
        // Progress resets the clock.
        sm.bytesSent(now: t(91))
        #expect(sm.sweep(now: t(100), pendingOutputBytes: 4096) == .none)
    }
}

@Suite struct HTTPConnectionShutdownTests {
    @Test func shutdownClosesAnIdleConnectionAtOnce() {
        var sm = machine()
        #expect(sm.shutdownRequested(pendingOutputBytes: 0) == .close)

        // A partial head is not a request in progress.
        var partial = machine()
        _ = partial.bytesReceived(now: t(1))
        #expect(partial.shutdownRequested(pendingOutputBytes: 0) == .close)
    }

    @Test func shutdownWhileAnAnswerIsBeingWrittenClosesAfterIt() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        #expect(sm.answer(at: t(1)) == .write)
        #expect(sm.shutdownRequested(pendingOutputBytes: 100) == .closeAfterOutput)
        #expect(!sm.wantsToRead(pendingOutputBytes: 100, bufferedInputBytes: 0))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }

    @Test func shutdownLetsARequestInFlightFinishWithConnectionClose() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        #expect(sm.shutdownRequested(pendingOutputBytes: 0) == .none)
        #expect(sm.answer(keepAlive: true, at: t(2)) == .writeThenClose(failBodyStream: false))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)

        // A body still arriving is read to its end first.
        var reading = machine()
        _ = reading.bytesReceived(now: t(1))
        _ = reading.headReceived(head(framing: .contentLength(10)), bodyLimit: 100, streamed: false, now: t(1))
        #expect(reading.shutdownRequested(pendingOutputBytes: 0) == .none)
        #expect(reading.requestEnded() == .dispatch)
        #expect(reading.answer(at: t(2)) == .writeThenClose(failBodyStream: false))
    }

    @Test func shutdownTellsTheUpgradeHandler() {
        var sm = machine()
        sm.receiveRequest(at: t(1))
        _ = sm.answer(upgrade: true, at: t(1))
        #expect(sm.shutdownRequested(pendingOutputBytes: 0) == .notifyUpgradeHandler)
    }
}

/// The lingering close: after the last answer, what the peer still sends is read and dropped until it closes or
/// the lingering time is over, so the kernel never answers unread input with a reset that could destroy the answer.
@Suite struct HTTPConnectionLingeringTests {
    static let configuration = HTTPConnectionStateMachine.Configuration(
        headerTimeout: .seconds(10), idleTimeout: .seconds(60), writeTimeout: .seconds(30),
        maxPendingOutputBytes: 1 << 20, maxPipelinedInputBytes: 1 << 16)

    @Test func theLastAnswerOutTheConnectionLingersReadingAndDropping() {
        var sm = HTTPConnectionStateMachine(configuration: Self.configuration, now: t(0))
        _ = sm.shutdownRequested(pendingOutputBytes: 10)
        #expect(sm.state == .closing(responsePending: false))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(1)) == .lingerThenClose)
        #expect(sm.state == .lingering(until: t(3)))
        // Still reading (to drop the rest of an unread body), never parsing, never accepting a request.
        #expect(sm.wantsToRead(pendingOutputBytes: 0, bufferedInputBytes: 0))
        #expect(sm.interest(pendingOutputBytes: 0, bufferedInputBytes: 0) == .readable)
        #expect(sm.bytesReceived(now: t(1.5)) == .discard)
        #expect(!sm.acceptsInput(pendingOutputBytes: 0))
        #expect(!sm.isServingRequests)
        // The peer's close ends it, or the lingering time does, or a shutdown.
        var closedByPeer = sm
        #expect(closedByPeer.peerHalfClosed(pendingOutputBytes: 0) == .close)
        #expect(sm.sweep(now: t(2.9), pendingOutputBytes: 0) == .none)
        #expect(sm.sweep(now: t(3), pendingOutputBytes: 0) == .close)
        var shutDown = sm
        #expect(shutDown.shutdownRequested(pendingOutputBytes: 0) == .close)
    }
}

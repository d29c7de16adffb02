import ParleyNet
import Testing

@testable import ParleyHTTP

/// The body deadlines (idle, minimum average rate after a grace period), the 404/405 answered from the head alone,
/// and the global budget for buffered bodies, as event -> action sequences with a hand-driven clock.

private func t(_ seconds: Double) -> Instant { Instant(nanoseconds: 1_000_000_000_000 + UInt64(seconds * 1e9)) }

/// 1,000 bytes a second after a 10 s grace period; the idle timeout (60 s) stays out of the way.
private func machine(minimumRate: Int = 1000) -> HTTPConnectionStateMachine {
    HTTPConnectionStateMachine(
        configuration: .init(
            headerTimeout: .seconds(10), idleTimeout: .seconds(60), writeTimeout: .seconds(60),
            maxPendingOutputBytes: 1 << 20, maxPipelinedInputBytes: 64 * 1024,
            minimumBodyBytesPerSecond: minimumRate, bodyGracePeriod: .seconds(10)),
        now: t(0))
}

private func head(_ framing: HTTPBodyFraming, method: HTTPMethod = .POST) -> HTTPRequestHead {
    HTTPRequestHead(method: method, target: "/upload", path: "/upload", framing: framing)
}

extension HTTPConnectionStateMachine {
    /// `count` body bytes arrive at `now`.
    fileprivate mutating func body(_ count: Int, at now: Instant) {
        _ = bytesReceived(now: now)
        _ = bodyReceived(byteCount: count)
    }
}

@Suite struct HTTPConnectionBodyRateTests {
    @Test func aBufferedBodyBelowTheMinimumRateIsAnswered408OnceTheGracePeriodIsOver() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        #expect(
            sm.headReceived(head(.contentLength(1 << 20)), bodyLimit: 2 << 20, streamed: false, now: t(1))
                == .readBody(sendContinue: false))
        // A trickle: bytes keep coming (the idle timeout never fires), far below 1,000 a second.
        for second in 2...10 { sm.body(100, at: t(Double(second))) }
        // Within the grace period nothing is measured.
        #expect(sm.sweep(now: t(10.9), pendingOutputBytes: 0) == .none)
        #expect(sm.sweep(now: t(11.5), pendingOutputBytes: 0) == .answerRequestTimeoutThenClose(.bodyTooSlow))
        #expect(sm.state == .closing(responsePending: false))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }

    @Test func aBodyAtTheMinimumAverageRateIsNeverCutOff() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        _ = sm.headReceived(head(.contentLength(1 << 20)), bodyLimit: 2 << 20, streamed: false, now: t(1))
        // A slow start is made up for later: only the average counts.
        sm.body(500, at: t(5))
        sm.body(12_000, at: t(11))
        for second in 12...40 {
            sm.body(1_000, at: t(Double(second)))
            #expect(sm.sweep(now: t(Double(second) + 0.5), pendingOutputBytes: 0) == .none)
        }
        #expect(sm.requestEnded() == .dispatch)
    }

    @Test func withoutAMinimumRateOnlyTheIdleTimeoutApplies() {
        var sm = machine(minimumRate: 0)
        _ = sm.bytesReceived(now: t(1))
        _ = sm.headReceived(head(.contentLength(1 << 20)), bodyLimit: 2 << 20, streamed: false, now: t(1))
        for second in stride(from: 30, through: 300, by: 30) {
            sm.body(1, at: t(Double(second)))
            #expect(sm.sweep(now: t(Double(second) + 29), pendingOutputBytes: 0) == .none)
        }
        #expect(sm.sweep(now: t(361), pendingOutputBytes: 0) == .answerRequestTimeoutThenClose(.bodyIdle))
    }

    @Test func aStreamedBodyBelowTheMinimumRateFailsItsStreamAndTheHandlersAnswerCloses() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        #expect(
            sm.headReceived(head(.chunked), bodyLimit: 100 << 20, streamed: true, now: t(1))
                == .dispatchWithBodyStream(sendContinue: false))
        sm.body(2_000, at: t(3))
        #expect(sm.sweep(now: t(11.5), pendingOutputBytes: 0) == .failBodyStreamWithRequestTimeout(.bodyTooSlow))
        // No more input is read; the handler's answer (the 408 its stream threw) goes out, then the close.
        #expect(!sm.wantsToRead(pendingOutputBytes: 0, bufferedInputBytes: 0))
        #expect(sm.sweep(now: t(12), pendingOutputBytes: 0) == .none)
        #expect(
            sm.responseReady(
                requestKeepAlive: true, responseCloses: false, upgrade: false, bufferedInputBytes: 0, now: t(12))
                == .writeThenClose(failBodyStream: false))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }

    @Test func aStreamedBodyThatStopsArrivingIsAnswered408AfterTheIdleTimeout() {
        var sm = machine(minimumRate: 0)
        _ = sm.bytesReceived(now: t(1))
        _ = sm.headReceived(head(.chunked), bodyLimit: 100 << 20, streamed: true, now: t(1))
        sm.body(2_000, at: t(3))
        #expect(sm.sweep(now: t(62), pendingOutputBytes: 0) == .none)
        #expect(sm.sweep(now: t(64), pendingOutputBytes: 0) == .failBodyStreamWithRequestTimeout(.bodyIdle))
    }

    @Test func whileTheStreamsConsumerHoldsReadingPausedTheClientIsNotMeasured() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        _ = sm.headReceived(head(.chunked), bodyLimit: 100 << 20, streamed: true, now: t(1))
        sm.body(300_000, at: t(2))
        sm.bodyConsumerFellBehind()
        // Paused far longer than the grace period and the idle timeout: no bytes can arrive, and none are asked for.
        for second in stride(from: 10, through: 200, by: 10) {
            #expect(sm.sweep(now: t(Double(second)), pendingOutputBytes: 0) == .none)
        }
        _ = sm.bodyConsumerCaughtUp(pendingOutputBytes: 0, bufferedInputBytes: 0)
        // Measured again from the last sweep that saw reading paused: a fresh grace period.
        #expect(sm.sweep(now: t(209), pendingOutputBytes: 0) == .none)
        sm.body(5_000, at: t(209))
        #expect(sm.sweep(now: t(211), pendingOutputBytes: 0) == .failBodyStreamWithRequestTimeout(.bodyTooSlow))
    }

    @Test func theRateOfAPipelinedRequestCountsFromItsOwnHead() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        _ = sm.headReceived(head(.contentLength(10)), bodyLimit: 100, streamed: false, now: t(1))
        _ = sm.bodyReceived(byteCount: 10)
        #expect(sm.requestEnded() == .dispatch)
        // The handler takes 30 s; the next request's head and body were read with the first.
        _ = sm.responseReady(
            requestKeepAlive: true, responseCloses: false, upgrade: false, bufferedInputBytes: 5000, now: t(31))
        _ = sm.outputDrained(bufferedInputBytes: 5000, now: t(0))
        _ = sm.headReceived(head(.contentLength(50_000)), bodyLimit: 1 << 20, streamed: false, now: t(31))
        _ = sm.bodyReceived(byteCount: 5000)
        #expect(sm.sweep(now: t(32), pendingOutputBytes: 0) == .none)
    }
}

@Suite struct HTTPConnectionUnroutedBodyTests {
    @Test func aRequestNoRouteTakesIsAnsweredFromItsHeadWithoutReadingItsBodyThenClosed() {
        for framing: HTTPBodyFraming in [.contentLength(100_000_000), .chunked] {
            var sm = machine()
            _ = sm.bytesReceived(now: t(1))
            #expect(
                sm.headReceived(head(framing), routed: false, bodyLimit: 1 << 20, streamed: false, now: t(1))
                    == .answerWithoutReadingBody)
            // Nothing more is parsed or read: the body is never buffered.
            #expect(!sm.acceptsInput(pendingOutputBytes: 0))
            #expect(!sm.wantsToRead(pendingOutputBytes: 0, bufferedInputBytes: 0))
            #expect(sm.bodyReceived(byteCount: 65536) == .discard)
            #expect(sm.sweep(now: t(100), pendingOutputBytes: 0) == .none)
            // The 404 (or 405) carries `Connection: close` and the connection ends after it.
            #expect(
                sm.responseReady(
                    requestKeepAlive: true, responseCloses: false, upgrade: false, bufferedInputBytes: 0, now: t(2))
                    == .writeThenClose(failBodyStream: false))
            #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
        }
    }

    @Test func aRequestNoRouteTakesWithoutABodyKeepsTheConnection() {
        for framing: HTTPBodyFraming in [.none, .contentLength(0)] {
            var sm = machine()
            _ = sm.bytesReceived(now: t(1))
            #expect(
                sm.headReceived(head(framing), routed: false, bodyLimit: 1 << 20, streamed: false, now: t(1))
                    == .readBody(sendContinue: false))
            #expect(sm.requestEnded() == .dispatch)
            #expect(
                sm.responseReady(
                    requestKeepAlive: true, responseCloses: false, upgrade: false, bufferedInputBytes: 0, now: t(2))
                    == .write)
            #expect(sm.state == .idle)
        }
    }
}

@Suite struct HTTPConnectionBodyBudgetTests {
    @Test func aBufferedBodyOverTheBudgetIsAnswered503ThenClosed() {
        var sm = machine()
        _ = sm.bytesReceived(now: t(1))
        _ = sm.headReceived(head(.contentLength(1000)), bodyLimit: 1 << 20, streamed: false, now: t(1))
        #expect(sm.bodyBudgetExhausted() == .answerServiceUnavailableThenClose)
        #expect(sm.state == .closing(responsePending: false))
        #expect(!sm.acceptsInput(pendingOutputBytes: 0))
        #expect(sm.outputDrained(bufferedInputBytes: 0, now: t(0)) == .lingerThenClose)
    }

    @Test func theBudgetConcernsOnlyABufferedBodyBeingRead() {
        var idle = machine()
        #expect(idle.bodyBudgetExhausted() == .none)
        #expect(idle.state == .idle)
        var streaming = machine()
        _ = streaming.bytesReceived(now: t(1))
        _ = streaming.headReceived(head(.chunked), bodyLimit: 1 << 20, streamed: true, now: t(1))
        #expect(streaming.bodyBudgetExhausted() == .none)
        #expect(streaming.state == .streamingBody(readingPaused: false))
    }

    @Test func theBudgetRefusesWhatWouldGoPastItAndTakesBackWhatIsReleased() {
        let budget = BodyBudget(limit: 1000)
        #expect(budget.reserve(600))
        #expect(budget.reserve(400))
        #expect(!budget.reserve(1))
        #expect(budget.used == 1000)
        budget.release(600)
        #expect(!budget.reserve(601))
        #expect(budget.reserve(600))
        budget.release(1000)
        #expect(budget.used == 0)
    }
}

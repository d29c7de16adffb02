import ParleyMessaging
import Testing

@testable import ParleyRealtime

/// The gateway's per-connection and per-session bounds as pure rules: the backlog of request frames (count and
/// bytes) and which sockets of a session a new one replaces.
@Suite struct PendingRequestsTests {
    @Test func framesWaitAsTextInOrderAndEachIsTakenOnce() {
        var pending = PendingRequests(maxCount: 64, maxBytes: 1000)
        #expect(pending.received(#"{"type":"ping","reqId":1}"#) == .queued(pauseReading: false))
        #expect(pending.received(#"{"type":"ping","reqId":2}"#) == .queued(pauseReading: false))
        #expect(pending.takeNext() == #"{"type":"ping","reqId":1}"#)
        #expect(pending.answered() == false)
        #expect(pending.takeNext() == #"{"type":"ping","reqId":2}"#)
        #expect(pending.answered() == false)
        #expect(pending.takeNext() == nil)
        #expect(pending.bytes == 0)
    }

    @Test func aBacklogOverItsBytesIsRefusedWhateverTheFrameCount() {
        var pending = PendingRequests(maxCount: 64, maxBytes: 1000)
        let frame = String(repeating: "x", count: 300)
        for _ in 0..<3 { #expect(pending.received(frame) == .queued(pauseReading: false)) }
        // 900 bytes wait: the fourth frame would make 1,200.
        #expect(pending.received(frame) == .overflow)
        #expect(pending.bytes == 900)
        // A small frame still fits.
        #expect(pending.received(String(repeating: "y", count: 100)) == .queued(pauseReading: false))
    }

    @Test func theFrameBeingAnsweredCountsUntilItsAnswerIsOut() {
        var pending = PendingRequests(maxCount: 64, maxBytes: 1000)
        let frame = String(repeating: "x", count: 600)
        #expect(pending.received(frame) == .queued(pauseReading: false))
        #expect(pending.takeNext() == frame)
        // Parsed and being answered: its bytes are still held.
        #expect(pending.received(frame) == .overflow)
        _ = pending.answered()
        #expect(pending.received(frame) == .queued(pauseReading: false))
    }

    @Test func readingPausesAtTheFrameCountAndResumesOnceTheBacklogHalves() {
        var pending = PendingRequests(maxCount: 4, maxBytes: 1 << 20)
        for i in 0..<3 { #expect(pending.received("f\(i)") == .queued(pauseReading: false)) }
        #expect(pending.received("f3") == .queued(pauseReading: true))
        #expect(pending.readingPaused)
        // Frames already read still queue; the pause is asked for once.
        #expect(pending.received("f4") == .queued(pauseReading: false))
        var resumed: [Bool] = []
        while pending.takeNext() != nil { resumed.append(pending.answered()) }
        #expect(resumed == [false, false, false, true, false])
        #expect(!pending.readingPaused)
    }

    @Test func aLongBacklogIsServedInOrder() {
        var pending = PendingRequests(maxCount: 1000, maxBytes: 1 << 20)
        var next = 0
        var taken: [String] = []
        for round in 0..<10 {
            for _ in 0..<100 {
                _ = pending.received("f\(next)")
                next += 1
            }
            for _ in 0..<(round.isMultiple(of: 2) ? 70 : 120) {
                guard let text = pending.takeNext() else { break }
                taken.append(text)
                _ = pending.answered()
            }
        }
        while let text = pending.takeNext() {
            taken.append(text)
            _ = pending.answered()
        }
        #expect(taken == (0..<1000).map { "f\($0)" })
        #expect(pending.bytes == 0)
    }
}

@Suite struct SocketsPerSessionTests {
    @Test func aSessionWithinItsLimitKeepsEverySocket() {
        #expect(ConnectionRegistry.oldestBeyondLimit(sessionIds: [], adding: "s1", limit: 4).isEmpty)
        #expect(
            ConnectionRegistry.oldestBeyondLimit(sessionIds: ["s1", "s1", "s1"], adding: "s1", limit: 4).isEmpty)
    }

    @Test func theNewSocketPastTheLimitReplacesTheSessionsOldest() {
        // The user's connections, oldest first: two sessions (two devices).
        let ids = ["s1", "s2", "s1", "s1", "s2", "s1"]
        #expect(ConnectionRegistry.oldestBeyondLimit(sessionIds: ids, adding: "s1", limit: 4) == [0])
        #expect(ConnectionRegistry.oldestBeyondLimit(sessionIds: ids, adding: "s1", limit: 2) == [0, 2, 3])
        // Another device of the same user is not touched.
        #expect(ConnectionRegistry.oldestBeyondLimit(sessionIds: ids, adding: "s2", limit: 4).isEmpty)
        #expect(ConnectionRegistry.oldestBeyondLimit(sessionIds: ids, adding: "s2", limit: 2) == [1])
        #expect(ConnectionRegistry.oldestBeyondLimit(sessionIds: ids, adding: "s1", limit: 1) == [0, 2, 3, 5])
    }

    @Test func theDefaultsProbeBeforeTheyReplace() {
        let config = RealtimeConfiguration()
        #expect(config.probeConnectionsPerSession < config.maxConnectionsPerSession)
    }

    @Test func theDefaultMessageLimitHoldsTheLargestSendAndTheBacklogHoldsIt() {
        let config = RealtimeConfiguration()
        #expect(config.webSocket.maxMessageBytes > MessagingConfiguration.maxSendRequestBytes)
        #expect(config.webSocket.maxFrameBytes == config.webSocket.maxMessageBytes)
        #expect(config.maxPendingRequestBytes >= config.webSocket.maxMessageBytes)
    }
}

import Glibc
import Testing

@testable import ParleyNet

@Suite struct EventLoopTests {
    @Test func taskWithLoopPreferenceStaysOnLoopThreadAcrossAwaits() async throws {
        let group = try EventLoopGroup(threads: 2)
        defer { group.shutdown() }
        let loop = group.loops[1]
        let results = await Task(executorPreference: loop) { () -> [Bool] in
            var seen: [Bool] = [loop.inEventLoop]
            for _ in 0..<5 {
                await Task.yield()
                seen.append(loop.inEventLoop)
            }
            async let child = Task.detached { 1 }.value
            _ = await child
            seen.append(loop.inEventLoop)
            return seen
        }.value
        #expect(results == Array(repeating: true, count: 7))
    }

    @Test func executeFromAnotherThreadRunsInOrderOnTheLoop() async throws {
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let loop = group.loops[0]
        let order = try await loop.submit { () -> [Int] in
            [1, 2, 3]
        }
        #expect(order == [1, 2, 3])
        let onLoop = try await loop.submit { loop.inEventLoop && EventLoop.current === loop }
        #expect(onLoop)
        #expect(!loop.inEventLoop)
    }

    @Test func timersFireInDeadlineOrderAndCancelledOnesDoNot() async throws {
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let loop = group.loops[0]
        let fired: [Int] = try await withCheckedThrowingContinuation { continuation in
            loop.execute {
                var log: [Int] = []
                loop.scheduleTimer(after: .milliseconds(30)) { log.append(3) }
                loop.scheduleTimer(after: .milliseconds(10)) { log.append(1) }
                let cancelled = loop.scheduleTimer(after: .milliseconds(20)) { log.append(2) }
                loop.cancelTimer(cancelled)
                loop.scheduleTimer(after: .milliseconds(60)) { continuation.resume(returning: log) }
            }
        }
        #expect(fired == [1, 3])
    }

    @Test func timerQueueOrdersManyDeadlines() {
        var queue = TimerQueue()
        var out: [Int] = []
        var values = Array(0..<200)
        var rng = SystemRandomNumberGenerator()
        values.shuffle(using: &rng)
        var box: [Int] = []
        for v in values {
            _ = queue.schedule(at: Instant(nanoseconds: UInt64(v))) { box.append(v) }
        }
        for work in queue.popExpired(now: Instant(nanoseconds: 1000)) { work() }
        out = box
        #expect(out == Array(0..<200))
        #expect(queue.isEmpty)
    }
}

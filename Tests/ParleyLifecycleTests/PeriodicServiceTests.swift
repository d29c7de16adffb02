import ParleyLifecycle
import ParleyTestSupport
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct PeriodicServiceTests {
    @Test func runsAfterTheDelayThenEveryIntervalAndNeverAfterCancellation() async throws {
        let clock = ManualClock()
        let runs = Atomic<Int>(0)
        let service = PeriodicService("test", every: .seconds(10), firstAfter: .seconds(30), clock: clock) {
            runs.add(1, ordering: .relaxed)
        }
        let returned = Atomic<Bool>(false)
        let task = Task {
            await service.run()
            returned.store(true, ordering: .relaxed)
        }
        #expect(try await eventually(timeout: .seconds(30)) { clock.sleeperCount == 1 } != nil)
        clock.advance(by: .seconds(29))
        #expect(clock.sleeperCount == 1)
        #expect(runs.load(ordering: .relaxed) == 0)
        clock.advance(by: .seconds(1))
        #expect(
            try await eventually(timeout: .seconds(30)) {
                runs.load(ordering: .relaxed) == 1 && clock.sleeperCount == 1
            } != nil)
        clock.advance(by: .seconds(9))
        #expect(clock.sleeperCount == 1)
        #expect(runs.load(ordering: .relaxed) == 1)
        clock.advance(by: .seconds(1))
        #expect(
            try await eventually(timeout: .seconds(30)) {
                runs.load(ordering: .relaxed) == 2 && clock.sleeperCount == 1
            } != nil)

        task.cancel()
        #expect(try await eventually(timeout: .seconds(30)) { returned.load(ordering: .relaxed) } != nil)
        #expect(clock.sleeperCount == 0)
        clock.advance(by: .seconds(100))
        #expect(runs.load(ordering: .relaxed) == 2)
    }

    @Test func aZeroDelayRunsAtOnce() async throws {
        let clock = ManualClock()
        let runs = Atomic<Int>(0)
        let service = PeriodicService("test", every: .seconds(5), firstAfter: .zero, clock: clock) {
            runs.add(1, ordering: .relaxed)
        }
        let task = Task { await service.run() }
        #expect(
            try await eventually(timeout: .seconds(30)) {
                runs.load(ordering: .relaxed) == 1 && clock.sleeperCount == 1
            } != nil)
        clock.advance(by: .seconds(5))
        #expect(
            try await eventually(timeout: .seconds(30)) {
                runs.load(ordering: .relaxed) == 2 && clock.sleeperCount == 1
            } != nil)
        task.cancel()
        await task.value
    }

    @Test func cancellationEndsAWaitOnTheRealClockAtOnce() async throws {
        let runs = Atomic<Int>(0)
        let service = PeriodicService("test", every: .seconds(3600)) { runs.add(1, ordering: .relaxed) }
        let returned = Atomic<Bool>(false)
        let task = Task {
            await service.run()
            returned.store(true, ordering: .relaxed)
        }
        task.cancel()
        #expect(try await eventually(timeout: .seconds(30)) { returned.load(ordering: .relaxed) } != nil)
        #expect(runs.load(ordering: .relaxed) == 0)
    }
}

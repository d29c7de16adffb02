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

    /// Advances one interval and waits until the service sleeps again (after its pass, if it ran one).
    private func tick(_ clock: ManualClock, _ interval: Duration) async throws {
        clock.advance(by: interval)
        #expect(try await eventually(timeout: .seconds(30)) { clock.sleeperCount == 1 } != nil)
    }

    @Test func coordinatorWorkRunsOnlyWhileThisInstanceCoordinates() async throws {
        let clock = ManualClock()
        let runs = Atomic<Int>(0)
        let coordinates = Atomic<Bool>(false)
        let role = CoordinatorRole { coordinates.load(ordering: .relaxed) }
        let service = PeriodicService("sweep", every: .seconds(10), on: .coordinator(role), clock: clock) {
            runs.add(1, ordering: .relaxed)
        }
        let task = Task { await service.run() }
        #expect(try await eventually(timeout: .seconds(30)) { clock.sleeperCount == 1 } != nil)
        for _ in 0..<3 { try await tick(clock, .seconds(10)) }
        #expect(runs.load(ordering: .relaxed) == 0)
        coordinates.store(true, ordering: .relaxed)
        for _ in 0..<2 { try await tick(clock, .seconds(10)) }
        #expect(runs.load(ordering: .relaxed) == 2)
        coordinates.store(false, ordering: .relaxed)
        try await tick(clock, .seconds(10))
        #expect(runs.load(ordering: .relaxed) == 2)
        task.cancel()
        await task.value
    }

    @Test func aSharedQueueIsPolledEveryIntervalByTheCoordinatorAndSeldomByTheOthers() async throws {
        let clock = ManualClock()
        let runs = Atomic<Int>(0)
        let coordinates = Atomic<Bool>(false)
        let role = CoordinatorRole(othersEvery: .seconds(4)) { coordinates.load(ordering: .relaxed) }
        let service = PeriodicService(
            "queue", every: .seconds(1), firstAfter: .zero, on: .sharedQueue(role), clock: clock
        ) {
            runs.add(1, ordering: .relaxed)
        }
        let task = Task { await service.run() }
        // Not the coordinator: the first pass at once (nothing waits on a new instance), then one every 4 s.
        #expect(try await eventually(timeout: .seconds(30)) { clock.sleeperCount == 1 } != nil)
        #expect(runs.load(ordering: .relaxed) == 1)
        for _ in 0..<3 { try await tick(clock, .seconds(1)) }
        #expect(runs.load(ordering: .relaxed) == 1)
        try await tick(clock, .seconds(1))
        #expect(runs.load(ordering: .relaxed) == 2)
        for _ in 0..<8 { try await tick(clock, .seconds(1)) }
        #expect(runs.load(ordering: .relaxed) == 4)
        // The coordinator: every interval, once the wait it began as another instance is over.
        coordinates.store(true, ordering: .relaxed)
        for _ in 0..<4 { try await tick(clock, .seconds(1)) }
        #expect(runs.load(ordering: .relaxed) == 5)
        for _ in 0..<4 { try await tick(clock, .seconds(1)) }
        #expect(runs.load(ordering: .relaxed) == 9)
        task.cancel()
        await task.value
    }
}

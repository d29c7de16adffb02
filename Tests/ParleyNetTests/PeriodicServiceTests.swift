import ParleyNet
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct PeriodicServiceTests {
    @Test func runsAfterTheDelayThenEveryIntervalAndNeverAfterCancellation() async {
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
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .seconds(29))
        #expect(clock.sleeperCount == 1)
        #expect(runs.load(ordering: .relaxed) == 0)
        clock.advance(by: .seconds(1))
        #expect(await eventually { runs.load(ordering: .relaxed) == 1 && clock.sleeperCount == 1 })
        clock.advance(by: .seconds(9))
        #expect(clock.sleeperCount == 1)
        #expect(runs.load(ordering: .relaxed) == 1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { runs.load(ordering: .relaxed) == 2 && clock.sleeperCount == 1 })

        task.cancel()
        #expect(await eventually { returned.load(ordering: .relaxed) })
        #expect(clock.sleeperCount == 0)
        clock.advance(by: .seconds(100))
        #expect(runs.load(ordering: .relaxed) == 2)
    }

    @Test func aZeroDelayRunsAtOnce() async {
        let clock = ManualClock()
        let runs = Atomic<Int>(0)
        let service = PeriodicService("test", every: .seconds(5), firstAfter: .zero, clock: clock) {
            runs.add(1, ordering: .relaxed)
        }
        let task = Task { await service.run() }
        #expect(await eventually { runs.load(ordering: .relaxed) == 1 && clock.sleeperCount == 1 })
        clock.advance(by: .seconds(5))
        #expect(await eventually { runs.load(ordering: .relaxed) == 2 && clock.sleeperCount == 1 })
        task.cancel()
        await task.value
    }

    @Test func cancellationEndsAWaitOnTheRealClockAtOnce() async {
        let runs = Atomic<Int>(0)
        let service = PeriodicService("test", every: .seconds(3600)) { runs.add(1, ordering: .relaxed) }
        let returned = Atomic<Bool>(false)
        let task = Task {
            await service.run()
            returned.store(true, ordering: .relaxed)
        }
        task.cancel()
        #expect(await eventually { returned.load(ordering: .relaxed) })
        #expect(runs.load(ordering: .relaxed) == 0)
    }
}

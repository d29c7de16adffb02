/// Runs `work` over and over until cancelled: first after `delay`, then `interval` after each run ended (runs
/// never overlap; a slow one delays the next instead of piling up). `work` handles its own errors (it logs
/// them: the next run is the retry). Cancellation ends the wait at once; a run in progress is left to finish. Its
/// `participation` decides, at each due pass, whether this instance runs it or skips it.
public struct PeriodicService<C: Clock>: Service where C.Duration == Duration {
    public let name: String
    public let interval: Duration
    public let delay: Duration
    public let participation: Participation
    private let clock: C
    private let work: @Sendable () async -> Void

    /// `firstAfter`: the wait before the first run (default: one `interval`; `.zero` runs at once). `clock`: an
    /// injected clock for tests.
    public init(
        _ name: String, every interval: Duration, firstAfter delay: Duration? = nil,
        on participation: Participation = .everyInstance, clock: C, work: @escaping @Sendable () async -> Void
    ) {
        precondition(interval > .zero, "a periodic service needs a positive interval")
        self.name = name
        self.interval = interval
        self.delay = delay ?? interval
        self.participation = participation
        self.clock = clock
        self.work = work
    }

    public func run() async {
        var wait = delay
        while !Task.isCancelled {
            if wait > .zero {
                do {
                    try await clock.sleep(for: wait)
                } catch {
                    return // cancelled
                }
            }
            if Task.isCancelled { return }
            let pass = participation.pass(interval: interval)
            wait = pass.next
            if pass.runs { await work() }
        }
    }
}

extension PeriodicService where C == ContinuousClock {
    public init(
        _ name: String, every interval: Duration, firstAfter delay: Duration? = nil,
        on participation: Participation = .everyInstance, work: @escaping @Sendable () async -> Void
    ) {
        self.init(name, every: interval, firstAfter: delay, on: participation, clock: ContinuousClock(), work: work)
    }
}

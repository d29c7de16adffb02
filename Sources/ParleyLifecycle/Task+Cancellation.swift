extension Task where Success == Never, Failure == Never {
    /// Suspends until the current task is cancelled (returns at once if it already is): the `run()` of a service
    /// whose work happens elsewhere (on event-loop threads, in a thread pool) and that only waits to be stopped.
    public static func waitUntilCancelled() async {
        // An AsyncStream's iteration ends when the iterating task is cancelled; this one yields nothing else.
        let (never, continuation) = AsyncStream.makeStream(of: Void.self)
        for await _ in never {}
        continuation.finish()
    }
}

/// Runs `body` in a task of its own, so the current task's cancellation does not cut it short: a service's
/// clean-up after it was cancelled (a graceful shutdown that sleeps while requests finish would otherwise
/// spin, each sleep ending at once).
public func withCancellationShield<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
    await Task { await body() }.value
}

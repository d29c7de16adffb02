import Dispatch
import Foundation
import ParleyHTTP
import Synchronization

/// A few dedicated threads for scrypt. A hash takes about 0.1 s of CPU: run on an event loop it would stall
/// every connection of that loop, and on Swift's cooperative pool it would starve other tasks. The queue is
/// bounded so a login flood is answered quickly (503) instead of piling up minutes of work.
public final class PasswordHashingPool: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var running = false
        var stopped = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let threadCount: Int
    private let maxQueued: Int

    public init(threads: Int, maxQueued: Int = 256) {
        threadCount = max(1, threads)
        self.maxQueued = maxQueued
    }

    public func start() {
        let shouldStart = state.withLock { state -> Bool in
            guard !state.running, !state.stopped else { return false }
            state.running = true
            return true
        }
        guard shouldStart else { return }
        for _ in 0..<threadCount {
            Thread.detachNewThread { [self] in workerLoop() }
        }
    }

    /// Lets queued work finish, then ends the threads.
    public func shutdown() {
        let wasRunning = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return state.running && !state.stopped
        }
        guard wasRunning else { return }
        for _ in 0..<threadCount { available.signal() }
    }

    /// Runs `work` on a pool thread and resumes the caller with its result (on the caller's executor).
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws(APIError) -> T {
        let result: Result<T, APIError> = await withUnsafeContinuation { continuation in
            let accepted = state.withLock { state -> Bool in
                guard state.running, !state.stopped, state.jobs.count - state.head < maxQueued else { return false }
                state.jobs.append { continuation.resume(returning: .success(work())) }
                return true
            }
            if accepted {
                available.signal()
            } else {
                continuation.resume(returning: .failure(APIError.authBusy))
            }
        }
        return try result.get()
    }

    private func workerLoop() {
        while true {
            available.wait()
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                guard state.head < state.jobs.count else { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                // Compact once the consumed prefix dominates, so the array does not grow forever.
                if state.head > 64 && state.head * 2 > state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return job
            }
            guard let job else { return } // a stop signal with nothing queued
            job()
        }
    }
}

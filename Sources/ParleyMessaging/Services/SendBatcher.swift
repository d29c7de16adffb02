import ParleyNet

/// Gathers the sends that arrive on one event loop while earlier ones are being committed, and stores them
/// with one statement and one commit (`parley_send_messages`). At low load a send goes out at the end of the
/// loop turn it arrived in, alone; under load each commit carries up to `maxBatch` messages, so the cost of a
/// transaction (round trip, commit, WAL flush) is shared. Every send still answers only after its commit.
///
/// One `LoopBatcher` per loop (a `LoopLocal`, reached without a lock), loop-confined: state is touched only on
/// its loop's thread (the request tasks that submit run there, and so do the flushes), hence no locks.
final class SendBatcher: Sendable {
    let repository: MessageRepository
    let maxBatch: Int
    /// Batches in flight per loop: one commits while the next one forms.
    let maxInFlight: Int
    private let batchers: LoopLocal<LoopBatcher>

    init(repository: MessageRepository, maxBatch: Int = 64, maxInFlight: Int = 2) {
        self.repository = repository
        self.maxBatch = maxBatch
        self.maxInFlight = maxInFlight
        let limits = LoopBatcher.Limits(repository: repository, maxBatch: maxBatch, maxInFlight: maxInFlight)
        // Made by `batchers.value`, which `send` reads on an event loop only.
        batchers = LoopLocal {
            guard let loop = EventLoop.current else { preconditionFailure("a send batcher is made on its event loop") }
            return LoopBatcher(loop: loop, limits: limits)
        }
    }

    func send(_ message: MessageRepository.NewMessage) async throws -> SendOutcome {
        // Off the event loops (tools, tests on the cooperative pool) there is nothing to gather with. Push options,
        // `noUnread`, replies and mentions are arguments of the single send only: such sends go alone.
        guard EventLoop.current != nil, message.isBatchable else {
            return try await repository.send(message)
        }
        return try await batchers.value.submit(message)
    }
}

private final class LoopBatcher: @unchecked Sendable {
    typealias Waiter = CheckedContinuation<SendOutcome, any Error>

    struct Limits: Sendable {
        let repository: MessageRepository
        let maxBatch: Int
        let maxInFlight: Int
    }

    let loop: EventLoop
    let limits: Limits
    private var pending: [(message: MessageRepository.NewMessage, waiter: Waiter)] = []
    private var inFlight = 0
    private var flushScheduled = false

    init(loop: EventLoop, limits: Limits) {
        self.loop = loop
        self.limits = limits
    }

    /// Called on `loop` (from a request task running there).
    func submit(_ message: MessageRepository.NewMessage) async throws -> SendOutcome {
        try await withCheckedThrowingContinuation { waiter in
            if loop.inEventLoop {
                enqueue(message, waiter)
            } else {
                loop.execute { self.enqueue(message, waiter) }
            }
        }
    }

    private func enqueue(_ message: MessageRepository.NewMessage, _ waiter: Waiter) {
        pending.append((message, waiter))
        scheduleFlush()
    }

    /// At the end of this loop turn, so that every request read in the same wake-up joins the batch.
    private func scheduleFlush() {
        guard !flushScheduled, inFlight < limits.maxInFlight, !pending.isEmpty else { return }
        flushScheduled = true
        loop.executeInLoop { self.flush() }
    }

    private func flush() {
        flushScheduled = false
        guard inFlight < limits.maxInFlight, !pending.isEmpty else { return }
        let batch = Array(pending.prefix(limits.maxBatch))
        pending.removeFirst(batch.count)
        inFlight += 1
        let repository = limits.repository
        Task(executorPreference: loop) {
            let outcomes: [Result<SendOutcome, any Error>]
            do {
                outcomes = try await repository.send(batch: batch.map(\.message))
            } catch {
                outcomes = Array(repeating: .failure(error), count: batch.count)
            }
            for (entry, outcome) in zip(batch, outcomes) { entry.waiter.resume(with: outcome) }
            self.inFlight -= 1
            self.scheduleFlush()
        }
    }
}

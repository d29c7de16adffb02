import ParleyObservability
import Synchronization

/// Starts services in order and stops them in reverse.
///
/// Start-up: each service's `prepare()` returns before the next one's begins, and its `run()` then goes on in a
/// task of its own. The group then waits for one of: the `until` closure returning (a termination signal in
/// `parley serve`), the cancellation of the task running the group, or a failure (a service that throws or
/// returns while it should be running; logged with the service's name). Then it stops the running services one
/// by one, last started first: it cancels a service's task and waits for `run()` to return before stopping the
/// one started before it, so a service never outlives what it uses.
public struct ServiceGroup: Sendable {
    public let services: [any Service]
    let logger: Logger

    public init(services: [any Service], logger: Logger) {
        self.services = services
        self.logger = logger
    }

    /// A service's `run()` returned although nobody asked it to stop.
    public struct EndedEarly: Error, CustomStringConvertible {
        public let service: String
        public var description: String { "\(service) returned while it should have been running" }
    }

    /// Runs the services until `stop` returns (or this task is cancelled, or a service fails), then stops them
    /// in reverse order. Throws the failure that stopped the group, after every service has stopped.
    public func run(until stop: @escaping @Sendable () async -> Void) async throws {
        let state = GroupState()
        let trigger = Task {
            await stop()
            state.requestStop()
        }
        defer { trigger.cancel() }
        try await withTaskCancellationHandler {
            try await startRunAndStop(state)
        } onCancel: {
            state.requestStop()
        }
    }

    private func startRunAndStop(_ state: GroupState) async throws {
        var running: [(name: String, task: Task<Void, Never>)] = []
        var startFailure: (any Error)?
        for service in services where !state.isStopping {
            do {
                try await service.prepare()
            } catch {
                if !state.isStopping {
                    logger.error(
                        "service failed to start",
                        [
                            "service": .string(service.name),
                            "error": .string(String(describing: error)),
                        ])
                    startFailure = error
                }
                break
            }
            running.append((service.name, Task { await supervise(service, state) }))
        }
        if startFailure == nil { await state.waitForStop() }
        for (name, task) in running.reversed() {
            logger.debug("stopping service", ["service": .string(name)])
            task.cancel()
            await task.value
        }
        if let failure = startFailure ?? state.failure { throw failure }
    }

    /// Runs one service; an end the group did not ask for is a failure.
    private func supervise(_ service: any Service, _ state: GroupState) async {
        let outcome: (any Error)?
        do {
            try await service.run()
            outcome = Task.isCancelled ? nil : EndedEarly(service: service.name)
        } catch {
            outcome = Task.isCancelled && error is CancellationError ? nil : error
        }
        guard let outcome else { return }
        if state.fail(outcome) {
            logger.error(
                "service failed", ["service": .string(service.name), "error": .string(String(describing: outcome))])
        } else {
            // The group is stopping anyway: worth a line, not a failed exit.
            logger.warning(
                "service failed while stopping",
                [
                    "service": .string(service.name),
                    "error": .string(String(describing: outcome)),
                ])
        }
    }
}

/// Whether the group should stop, and why.
private final class GroupState: Sendable {
    private struct State {
        var stopping = false
        var failure: (any Error)?
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    var isStopping: Bool { state.withLock { $0.stopping } }

    var failure: (any Error)? { state.withLock { $0.failure } }

    func requestStop() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.stopping = true
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    /// Records a failure and stops the group; false when it was stopping already (the failure is not kept).
    func fail(_ error: any Error) -> Bool {
        let (first, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard !state.stopping else { return (false, nil) }
            state.stopping = true
            state.failure = error
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume()
        return first
    }

    func waitForStop() async {
        await withCheckedContinuation { continuation in
            let stopping = state.withLock { state -> Bool in
                if !state.stopping { state.waiter = continuation }
                return state.stopping
            }
            if stopping { continuation.resume() }
        }
    }
}

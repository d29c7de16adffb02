import Synchronization

/// The in-process bus from the messaging services to the realtime gateway. Publishing never blocks: each
/// subscriber has a bounded buffer and loses the oldest events when it falls that far behind (its clients
/// recover through sync); `dropped` counts such losses.
public final class MessagingEvents: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<MessagingEvent>.Continuation] = [:]
        var nextID = 0
        var finished = false
    }

    private let state = Mutex(State())
    private let observers = Mutex<[@Sendable (MessagingEvent) -> Void]>([])
    private let droppedCount = Atomic<Int>(0)
    public let bufferSize: Int

    public init(bufferSize: Int = 65_536) {
        self.bufferSize = bufferSize
    }

    public var dropped: Int { droppedCount.load(ordering: .relaxed) }

    public func subscribe() -> AsyncStream<MessagingEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: MessagingEvent.self,
            bufferingPolicy: .bufferingNewest(bufferSize))
        let id: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Registers `observer` to run inline in every `publish`, on the publisher's thread (usually the event loop of
    /// the request that caused the event) and in publish order: the realtime gateway fans out from there without a
    /// hop to another thread. An observer must not block; slow work belongs in a task it starts.
    public func observe(_ observer: @escaping @Sendable (MessagingEvent) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    public func publish(_ event: MessagingEvent) {
        for observer in observers.withLock({ $0 }) { observer(event) }
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers {
            if case .dropped = subscriber.yield(event) { droppedCount.add(1, ordering: .relaxed) }
        }
    }

    public func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}

import Synchronization

/// What `SessionEvents` publishes.
public enum SessionEvent: Sendable, Hashable {
    case sessionEnded(EndedSession)
}

/// An in-process bus of session events. Every instance publishes the sessions it ends itself and the ones other
/// instances ended (learned through NOTIFY or the poll), each once. Subscribers get an `AsyncStream`; a slow
/// subscriber loses the oldest events beyond `bufferSize` rather than blocking authentication.
public final class SessionEvents: Sendable {
    private let subscribers = Mutex<[UInt64: AsyncStream<SessionEvent>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)
    private let bufferSize: Int

    public init(bufferSize: Int = 10_000) {
        self.bufferSize = bufferSize
    }

    public func subscribe() -> AsyncStream<SessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SessionEvent.self,
            bufferingPolicy: .bufferingNewest(bufferSize))
        let id = nextID.add(1, ordering: .relaxed).newValue
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    public func publish(_ event: SessionEvent) {
        let targets = subscribers.withLock { Array($0.values) }
        for continuation in targets { continuation.yield(event) }
    }

    /// Ends every subscription (at shutdown).
    func finish() {
        let targets = subscribers.withLock { map in
            defer { map.removeAll() }
            return Array(map.values)
        }
        for continuation in targets { continuation.finish() }
    }
}

import Glibc
import Synchronization

/// One instance of a value per thread, made on the thread's first use and reached without a lock: per-request
/// caches that two event loops would otherwise contend for (metric series, the log's timestamp prefix). A value
/// lives until its thread ends; keep the `ThreadLocal` itself for the life of the process.
public final class ThreadLocal<Value: AnyObject>: @unchecked Sendable {
    private var key = pthread_key_t()
    private let make: @Sendable () -> Value

    public init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
        // The thread's reference is released when the thread exits.
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
    }

    deinit { pthread_key_delete(key) }

    /// This thread's instance.
    @inline(__always)
    public var value: Value {
        if let raw = pthread_getspecific(key) { return Unmanaged<Value>.fromOpaque(raw).takeUnretainedValue() }
        return makeForThisThread()
    }

    private func makeForThisThread() -> Value {
        let created = make()
        pthread_setspecific(key, Unmanaged<AnyObject>.passRetained(created).toOpaque())
        return created
    }
}

/// One instance per thread, like `ThreadLocal`, that other threads can still reach: each thread works on its own
/// instance (no shared lock, no cache line bouncing between cores on the hot path), and rare operations that must
/// reach every instance (invalidation) walk them all. `Value` guards its own state, since both its thread and a
/// walker touch it.
public final class ThreadSharded<Value: AnyObject & Sendable>: Sendable {
    private let local: ThreadLocal<Value>
    private let registry: Registry

    private final class Registry: Sendable {
        let all = Mutex<[Value]>([])
    }

    public init(_ make: @escaping @Sendable () -> Value) {
        let registry = Registry()
        self.registry = registry
        local = ThreadLocal {
            let created = make()
            registry.all.withLock { $0.append(created) }
            return created
        }
    }

    /// This thread's instance.
    @inline(__always)
    public var value: Value { local.value }

    /// Every instance made so far, on every thread.
    public func forEach(_ body: (Value) -> Void) {
        for value in registry.all.withLock({ $0 }) { body(value) }
    }
}

import Glibc
import Synchronization

/// One instance of a value per event loop, made on the loop's first use and reached without a lock: caches that
/// every request reads (download metadata, signing keys, metric series, log buffers) and that two loops would
/// otherwise contend for, a lock and a cache line bouncing between cores. Code running off the loops (the
/// cooperative pool, Dispatch, a test's thread) gets one instance per thread instead, so a `LoopLocal` works
/// wherever it is read; on a loop its instance belongs to the loop, not to the thread that happens to run it.
///
/// Every instance is owned by the `LoopLocal` and lives as long as it; rare operations that must reach them all
/// (invalidation, a flush) walk them with `forEach`. Make one per service at start-up, never one per request.
public final class LoopLocal<Value: AnyObject>: @unchecked Sendable {
    private let slot: Int
    private let make: @Sendable () -> Value
    /// Every instance made so far (the slots hold them unretained): they go when the `LoopLocal` goes.
    private let instances = Mutex<[Value]>([])

    public init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
        slot = LoopLocalSlots.nextSlot.add(1, ordering: .relaxed).oldValue
    }

    /// The calling loop's instance (the calling thread's, off the loops).
    @inline(__always)
    public var value: Value {
        let slots = LoopLocalSlots.current
        if slot < slots.values.count, let raw = slots.values[slot] {
            return Unmanaged<Value>.fromOpaque(raw).takeUnretainedValue()
        }
        return makeValue(in: slots)
    }

    private func makeValue(in slots: LoopLocalSlots) -> Value {
        let created = make()
        let box = UncheckedBox(created)
        instances.withLock { $0.append(box.value) }
        if slot >= slots.values.count {
            slots.values.append(contentsOf: repeatElement(nil, count: slot - slots.values.count + 1))
        }
        slots.values[slot] = Unmanaged.passUnretained(created).toOpaque()
        return created
    }
}

extension LoopLocal where Value: Sendable {
    /// Every instance made so far, on every loop and thread. `Value` guards its own state, since its loop and a
    /// walker may touch it at once.
    public func forEach(_ body: (Value) -> Void) {
        for value in instances.withLock({ $0 }) { body(value) }
    }
}

/// Lets a non-Sendable value into the instance list; only `forEach` (Sendable values only) reads it from
/// another thread.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The instances of every `LoopLocal` one loop (or one thread off the loops) has made, indexed by the
/// `LoopLocal`'s slot. Touched only by the loop's (or the thread's) own code, so no lock.
final class LoopLocalSlots {
    /// Unretained: the `LoopLocal` owns its instances. A slot is never reused, so the pointer of a `LoopLocal`
    /// that is gone is never read again.
    var values: [UnsafeMutableRawPointer?] = []

    static let nextSlot = Atomic<Int>(0)

    /// The running loop's slots, or the calling thread's (made on first use, released when the thread ends).
    @inline(__always)
    static var current: LoopLocalSlots {
        if let raw = pthread_getspecific(currentSlotsKey) {
            return Unmanaged<LoopLocalSlots>.fromOpaque(raw).takeUnretainedValue()
        }
        let slots = LoopLocalSlots()
        pthread_setspecific(currentSlotsKey, Unmanaged.passRetained(slots).toOpaque())
        return slots
    }

    /// Makes `slots` current on this thread while `body` runs (a loop's `run()`), then restores the thread's own.
    static func withCurrent<R>(_ slots: LoopLocalSlots, _ body: () -> R) -> R {
        let previous = pthread_getspecific(currentSlotsKey)
        pthread_setspecific(currentSlotsKey, Unmanaged.passUnretained(slots).toOpaque())
        defer { pthread_setspecific(currentSlotsKey, previous) }
        return body()
    }
}

/// Holds a loop's slots (unretained, while its `run()` lasts) or the thread's own (retained, released when the
/// thread ends: a loop's are never current then, since `run()` has restored the thread's).
private let currentSlotsKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { pointer in
        if let pointer { Unmanaged<LoopLocalSlots>.fromOpaque(pointer).release() }
    }
    return key
}()

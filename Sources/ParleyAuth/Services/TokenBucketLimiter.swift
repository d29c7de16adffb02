import ParleyNet
import Synchronization

/// One token bucket: `capacity` tokens, refilled at `refillPerNanosecond`. A pure value: the time is passed in.
public struct TokenBucket: Sendable, Equatable {
    public private(set) var tokens: Double
    /// Monotonic nanoseconds of the last refill.
    public private(set) var updated: UInt64

    /// A full bucket.
    public init(capacity: Double, now: UInt64) {
        tokens = capacity
        updated = now
    }

    /// Refills for the time since the last call, then takes one token: nil when taken, else the whole seconds until
    /// one is back (at least 1; nothing taken). A clock that went backwards refills nothing.
    public mutating func take(now: UInt64, capacity: Double, refillPerNanosecond: Double) -> Int? {
        let elapsed = now >= updated ? Double(now - updated) : 0
        tokens = min(capacity, tokens + elapsed * refillPerNanosecond)
        updated = max(updated, now)
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        return max(1, Int(((1 - tokens) / refillPerNanosecond / 1e9).rounded(.up)))
    }

    /// Whether the bucket would be full by `now` (then it carries no information and may be forgotten).
    public func isFull(now: UInt64, capacity: Double, refillPerNanosecond: Double) -> Bool {
        let elapsed = now >= updated ? Double(now - updated) : 0
        return tokens + elapsed * refillPerNanosecond >= capacity
    }
}

/// Token buckets by key (a client address, an account, a user): `ratePerSecond` sustained, bursts up to `burst`.
/// Sharded so that two loops rarely contend for one lock; idle buckets are dropped when a shard grows large (a
/// full bucket carries no information). In memory: each instance counts for itself.
public final class TokenBucketLimiter<Key: Hashable & Sendable>: Sendable {
    /// A class so that the (noncopyable) mutexes can live in an array.
    final class Shard: Sendable {
        let buckets = Mutex<[Key: TokenBucket]>([:])
    }

    private static var shardCount: Int { 16 }
    private let shards: [Shard]
    private let capacity: Double
    private let refillPerNanosecond: Double
    private let maxEntriesPerShard: Int
    /// False when the rate is 0: every call is allowed without a lookup.
    public let isEnabled: Bool

    /// `ratePerSecond` 0 disables the limiter; `burst` is the bucket's size (at least 1).
    public init(ratePerSecond: Double, burst: Int, maxEntriesPerShard: Int = 50_000) {
        isEnabled = ratePerSecond > 0
        capacity = Double(max(1, burst))
        refillPerNanosecond = ratePerSecond / 1e9
        self.maxEntriesPerShard = maxEntriesPerShard
        shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    /// `ratePerMinute` sustained, bursts up to the same number; 0 disables the limiter.
    public convenience init(ratePerMinute: Int, maxEntriesPerShard: Int = 50_000) {
        self.init(
            ratePerSecond: Double(ratePerMinute) / 60, burst: ratePerMinute, maxEntriesPerShard: maxEntriesPerShard)
    }

    /// Takes one token for `key`; nil when allowed, else the whole seconds until a token is available.
    public func acquire(_ key: Key, now: Instant = .now()) -> Int? {
        guard isEnabled else { return nil }
        let shard = shards[Int(UInt(bitPattern: key.hashValue) % UInt(Self.shardCount))]
        let (capacity, refill) = (capacity, refillPerNanosecond)
        return shard.buckets.withLock { buckets -> Int? in
            let wait = buckets[key, default: TokenBucket(capacity: capacity, now: now.nanoseconds)].take(
                now: now.nanoseconds, capacity: capacity, refillPerNanosecond: refill)
            if buckets.count > maxEntriesPerShard {
                buckets = buckets.filter {
                    !$0.value.isFull(now: now.nanoseconds, capacity: capacity, refillPerNanosecond: refill)
                }
            }
            return wait
        }
    }
}

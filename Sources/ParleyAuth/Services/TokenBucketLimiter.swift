import ParleyNet
import Synchronization

/// Token buckets by key (a client address, an account): `ratePerMinute` requests per minute sustained, bursts up
/// to the same number. Sharded so that two loops rarely contend for one lock; idle buckets are dropped when a
/// shard grows large (a full bucket carries no information).
public final class TokenBucketLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: UInt64 // monotonic nanoseconds
    }

    /// A class so that the (noncopyable) mutexes can live in an array.
    final class Shard: Sendable {
        let buckets = Mutex<[String: Bucket]>([:])
    }

    private static let shardCount = 16
    private let shards: [Shard]
    private let capacity: Double
    private let refillPerNanosecond: Double
    private let maxEntriesPerShard: Int

    /// `ratePerMinute` 0 disables the limiter.
    public let ratePerMinute: Int

    public init(ratePerMinute: Int, maxEntriesPerShard: Int = 50_000) {
        self.ratePerMinute = ratePerMinute
        capacity = Double(max(1, ratePerMinute))
        refillPerNanosecond = Double(ratePerMinute) / 60e9
        self.maxEntriesPerShard = maxEntriesPerShard
        shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    /// Takes one token for `key`; nil when allowed, else the whole seconds until a token is available.
    public func acquire(_ key: String, now: Instant = .now()) -> Int? {
        guard ratePerMinute > 0 else { return nil }
        let shard = shards[Int(UInt(bitPattern: key.hashValue) % UInt(Self.shardCount))]
        return shard.buckets.withLock { buckets -> Int? in
            var bucket = buckets[key] ?? Bucket(tokens: capacity, updated: now.nanoseconds)
            let elapsed = now.nanoseconds >= bucket.updated ? Double(now.nanoseconds - bucket.updated) : 0
            bucket.tokens = min(capacity, bucket.tokens + elapsed * refillPerNanosecond)
            bucket.updated = now.nanoseconds
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                buckets[key] = bucket
                if buckets.count > maxEntriesPerShard { prune(&buckets, now: now.nanoseconds) }
                return nil
            }
            buckets[key] = bucket
            let missing = 1 - bucket.tokens
            return max(1, Int((missing / refillPerNanosecond / 1e9).rounded(.up)))
        }
    }

    private func prune(_ buckets: inout [String: Bucket], now: UInt64) {
        buckets = buckets.filter { _, bucket in
            let elapsed = now >= bucket.updated ? Double(now - bucket.updated) : 0
            return bucket.tokens + elapsed * refillPerNanosecond < capacity
        }
    }
}

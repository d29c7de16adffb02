import Synchronization

/// Claims of tokens whose signature was already checked, by the exact token string. A client sends the same
/// access token for up to 15 minutes; checking its HMAC and decoding its JSON again on every request would cost
/// more than the rest of a cheap request (measured: about half the throughput of an unauthenticated route).
///
/// Only the signature check is cached: audience, expiry, revocation and consent are checked on every request.
/// The key is the whole token's bytes, compared in full, so a cached entry can only ever answer for the very bytes
/// that were verified (String equality is Unicode canonical equivalence: `\u{212A}` would equal `K`). Memory is
/// bounded: a full shard drops its expired entries, then everything.
final class VerifiedTokenCache: Sendable {
    /// A token compared and hashed by its UTF-8 bytes.
    struct Key: Hashable, Sendable {
        let token: String

        static func == (lhs: Key, rhs: Key) -> Bool { lhs.token.utf8.elementsEqual(rhs.token.utf8) }

        func hash(into hasher: inout Hasher) {
            var token = token
            token.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    final class Shard: Sendable {
        let entries = Mutex<[Key: TokenClaims]>([:])
    }

    private static let shardCount = 16
    private let shards: [Shard]
    private let capacityPerShard: Int

    init(capacity: Int = 64 * 1024) {
        capacityPerShard = max(1, capacity / Self.shardCount)
        shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    private func shard(_ token: String) -> Shard {
        // The signature's last byte is uniformly random: a free, cheap shard index.
        shards[Int(token.utf8.last ?? 0) % Self.shardCount]
    }

    func claims(for token: String) -> TokenClaims? {
        shard(token).entries.withLock { $0[Key(token: token)] }
    }

    func insert(_ claims: TokenClaims, for token: String, now: Int64) {
        shard(token).entries.withLock { entries in
            if entries.count >= capacityPerShard {
                entries = entries.filter { $0.value.exp > now }
                if entries.count >= capacityPerShard { entries.removeAll(keepingCapacity: true) }
            }
            entries[Key(token: token)] = claims
        }
    }
}

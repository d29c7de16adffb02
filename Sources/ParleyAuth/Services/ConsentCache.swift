import Synchronization

/// The privacy versions users are known to have accepted, so that after a policy bump a user who already
/// consented (but still holds a token with the old `pv`) costs one database lookup, not one per request.
/// Only ever raised, so a stale entry can only cause an extra lookup, never a wrong pass.
final class ConsentCache: Sendable {
    private struct Key: Hashable {
        let appId: Int64
        let userId: String
    }

    private let versions = Mutex<[Key: Int]>([:])
    private let capacity: Int

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    func covers(appId: Int64, userId: String, version: Int) -> Bool {
        versions.withLock { ($0[Key(appId: appId, userId: userId)] ?? -1) >= version }
    }

    func record(appId: Int64, userId: String, version: Int) {
        versions.withLock { map in
            // Bounded memory: a full cache starts over (entries are cheap to relearn).
            if map.count >= capacity { map.removeAll(keepingCapacity: true) }
            let key = Key(appId: appId, userId: userId)
            map[key] = max(map[key] ?? -1, version)
        }
    }
}

import Synchronization

/// Sessions that ended recently, so their still-unexpired access and IM tokens are refused without a database
/// query per request. An entry is kept for the longest token lifetime after the session ended (after that no
/// token of the session can still be valid), then pruned. Filled at start from the database and kept current
/// by `AuthSyncService`.
public final class SessionRevocations: Sendable {
    /// Session id -> when it ended (unix seconds).
    private let ended = Mutex<[String: Int64]>([:])

    public init() {}

    public func contains(_ sessionID: String) -> Bool {
        ended.withLock { $0[sessionID] != nil }
    }

    /// Records an ended session; returns true when it was not known yet.
    @discardableResult
    public func insert(_ sessionID: String, endedAt: Int64) -> Bool {
        ended.withLock { map in
            if map[sessionID] != nil { return false }
            map[sessionID] = endedAt
            return true
        }
    }

    /// Drops sessions that ended before `cutoff` (now minus the longest token lifetime).
    public func prune(endedBefore cutoff: Int64) {
        ended.withLock { map in
            map = map.filter { $0.value >= cutoff }
        }
    }

    public var count: Int { ended.withLock { $0.count } }
}

import ParleyWebSocket
import Synchronization

/// One open gateway connection as the rest of the process sees it.
struct GatewayEntry: Sendable, Hashable {
    var id: UInt64
    var appId: Int64
    var userId: String
    var sessionId: String
    var handle: WebSocketSessionHandle
    /// This connection's `Principal.origin` for the frames it sends: its session id and a key unique across
    /// instances (the origin travels with the event to every instance).
    var origin: String

    /// Whether an event from `origin` skips this connection: it came from this connection, or by REST from its
    /// session.
    func isOrigin(_ origin: String?) -> Bool {
        guard let origin else { return false }
        return origin == sessionId || origin == self.origin
    }
}

/// Who is online where: (app, user) -> their open connections (one per device, more while one reconnects).
/// Sharded by user so that connects, disconnects and fan-out lookups on different users rarely contend.
final class ConnectionRegistry: Sendable {
    struct UserKey: Hashable, Sendable {
        var appId: Int64
        var userId: String
    }

    private final class Shard: Sendable {
        let map = Mutex<[UserKey: [GatewayEntry]]>([:])
        func withLock<T>(_ body: (inout [UserKey: [GatewayEntry]]) -> T) -> T { map.withLock { body(&$0) } }
    }

    private static let shardCount = 32
    private let shards: [Shard]
    private let count = Atomic<Int>(0)
    /// Told, under the user's shard lock (so in order), when a user's first connection here opens (true) and
    /// when their last one closes (false): a routing relay subscribes to the user's events then.
    private let userInterest: (@Sendable (UserKey, Bool) -> Void)?

    init(userInterest: (@Sendable (UserKey, Bool) -> Void)? = nil) {
        shards = (0..<Self.shardCount).map { _ in Shard() }
        self.userInterest = userInterest
    }

    private func shard(_ key: UserKey) -> Shard {
        shards[Int(UInt(bitPattern: key.hashValue) % UInt(Self.shardCount))]
    }

    var connectionCount: Int { count.load(ordering: .relaxed) }

    /// What adding a connection asks of its session's older ones.
    struct Admission {
        /// Removed from the registry, beyond the session's `maxPerSession` (the new one counted): to be closed.
        var replaced: [GatewayEntry] = []
        /// Kept, beyond the session's `probeBeyond`: to be asked whether they are still alive.
        var doubted: [GatewayEntry] = []
    }

    /// Adds the connection; of its session's other connections, removes the oldest beyond `maxPerSession` and names
    /// the oldest beyond `probeBeyond` (both counting the new one), for the caller to close and to probe.
    func add(_ entry: GatewayEntry, probeBeyond: Int, maxPerSession: Int) -> Admission {
        let key = UserKey(appId: entry.appId, userId: entry.userId)
        let admission = shard(key).withLock { map -> Admission in
            var entries = map[key] ?? []
            var admission = Admission()
            let oldest = Self.oldestBeyondLimit(
                sessionIds: entries.map(\.sessionId), adding: entry.sessionId, limit: maxPerSession)
            admission.replaced = oldest.map { entries[$0] }
            for index in oldest.reversed() { entries.remove(at: index) }
            admission.doubted = Self.oldestBeyondLimit(
                sessionIds: entries.map(\.sessionId), adding: entry.sessionId, limit: probeBeyond
            ).map { entries[$0] }
            if entries.isEmpty { userInterest?(key, true) }
            entries.append(entry)
            map[key] = entries
            return admission
        }
        count.add(1 - admission.replaced.count, ordering: .relaxed)
        return admission
    }

    /// The positions in `sessionIds` (a user's connections, oldest first) of the connections of `sessionId` beyond
    /// `limit` once it has one more: its oldest.
    static func oldestBeyondLimit(sessionIds: [String], adding sessionId: String, limit: Int) -> [Int] {
        let positions = sessionIds.indices.filter { sessionIds[$0] == sessionId }
        let excess = positions.count + 1 - max(1, limit)
        return excess > 0 ? Array(positions.prefix(excess)) : []
    }

    /// Removes the connection; returns how many the user has left (0: they went offline).
    @discardableResult
    func remove(_ entry: GatewayEntry) -> Int {
        let key = UserKey(appId: entry.appId, userId: entry.userId)
        return shard(key).withLock { map in
            guard var entries = map[key], let index = entries.firstIndex(where: { $0.id == entry.id }) else {
                return map[key]?.count ?? 0
            }
            count.subtract(1, ordering: .relaxed)
            entries.remove(at: index)
            map[key] = entries.isEmpty ? nil : entries
            if entries.isEmpty { userInterest?(key, false) }
            return entries.count
        }
    }

    func connections(appId: Int64, userId: String) -> [GatewayEntry] {
        let key = UserKey(appId: appId, userId: userId)
        return shard(key).withLock { $0[key] ?? [] }
    }

    /// Every connection of `userIds`, except those `excluded` names (`Principal.origin`: a session's connections, or
    /// one connection).
    func connections(appId: Int64, userIds: some Sequence<String>, excludingOrigin excluded: String?)
        -> [WebSocketSessionHandle]
    {
        connections(appId: appId, userIds: userIds, excludingOrigin: excluded, online: { _ in })
    }

    /// The same, also calling `online` with each of `userIds` that has a connection here (an excluded origin's
    /// connection counts), in the same pass under the same locks.
    func connections(
        appId: Int64, userIds: some Sequence<String>, excludingOrigin excluded: String?,
        online: (String) -> Void
    ) -> [WebSocketSessionHandle] {
        var handles: [WebSocketSessionHandle] = []
        for userId in userIds {
            let key = UserKey(appId: appId, userId: userId)
            let found = shard(key).withLock { map -> Bool in
                guard let entries = map[key] else { return false }
                for entry in entries where !entry.isOrigin(excluded) { handles.append(entry.handle) }
                return true
            }
            if found { online(userId) }
        }
        return handles
    }

    /// Every connection (shutdown, lost cluster feed).
    func all() -> [GatewayEntry] {
        shards.flatMap { shard in shard.withLock { Array($0.values.joined()) } }
    }
}

import ParleyNet
import ParleyPostgres
import Synchronization

/// Messages stored per app and UTC day, counted in memory where they are stored (`MessageService.send`) and added to
/// `app_daily_counters.messages` by `AdminStatistics.flush`: a shared counter row updated inside every send
/// transaction would serialize all of an app's sends on it.
///
/// Each event loop counts into its own shard (`LoopLocal`), so sends on different loops never touch the same lock or
/// cache line; the flush walks the shards.
public final class DailyMessageCounts: Sendable {
    struct Key: Hashable, Sendable {
        var appId: Int64
        var day: UTCDay
    }

    final class Shard: Sendable {
        let counts = Mutex<[Key: Int64]>([:])
    }

    private let shards = LoopLocal { Shard() }

    public init() {}

    /// `count` messages of `appId` were stored now.
    @inline(__always)
    public func add(appId: Int64, count: Int = 1) {
        guard count > 0 else { return }
        let key = Key(appId: appId, day: .today)
        shards.value.counts.withLock { $0[key, default: 0] += Int64(count) }
    }

    /// Everything counted so far, and the shards emptied.
    func take() -> [Key: Int64] {
        var all: [Key: Int64] = [:]
        shards.forEach { shard in
            let counts = shard.counts.withLock { counts in
                defer { counts.removeAll(keepingCapacity: true) }
                return counts
            }
            all.merge(counts, uniquingKeysWith: +)
        }
        return all
    }

    /// Counts a failed flush could not write: kept for the next one.
    func putBack(_ counts: [Key: Int64]) {
        guard !counts.isEmpty else { return }
        shards.value.counts.withLock { $0.merge(counts, uniquingKeysWith: +) }
    }

    /// Adds `counts` to `app_daily_counters` (apps deleted meanwhile are skipped: their rows went with them).
    static func write(_ counts: [Key: Int64], on database: PostgresClient) async throws {
        guard !counts.isEmpty else { return }
        let entries = counts.sorted { ($0.key.appId, $0.key.day) < ($1.key.appId, $1.key.day) }
        _ = try await database.query(
            """
            INSERT INTO app_daily_counters AS c (app_id, day, messages)
            SELECT u.app, u.day, u.n
            FROM unnest(\(PostgresTextArray(entries.map { String($0.key.appId) }))::bigint[],
                        \(PostgresTextArray(entries.map { $0.key.day.iso }))::date[],
                        \(PostgresTextArray(entries.map { String($0.value) }))::bigint[]) AS u(app, day, n)
            JOIN apps a ON a.id = u.app
            ON CONFLICT (app_id, day) DO UPDATE SET messages = c.messages + EXCLUDED.messages
            """)
    }
}

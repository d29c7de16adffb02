import ParleyPostgres
import Synchronization

/// Users active per app and UTC day ("daily active users"): recorded where a session proves itself — a login, a
/// registration, a signed login, a refresh, an IM token renewal, a WebSocket connect — not on every request. Each
/// instance remembers whom it has recorded today (sharded, so concurrent records rarely share a lock) and queues
/// only the first sighting; `AdminStatistics.flush` inserts the queue into `app_daily_active_users` with ON CONFLICT
/// DO NOTHING and adds the rows it inserted to `app_daily_counters.active_users`, so a user seen on several instances
/// counts once.
public final class ActiveUsers: Sendable {
    struct Entry: Hashable, Sendable {
        var day: UTCDay
        var appId: Int64
        var userId: String
    }

    final class Shard: Sendable {
        struct State {
            var day = UTCDay(number: 0)
            var seen: Set<Entry> = []
            var pending: [Entry] = []
        }
        let state = Mutex(State())
    }

    private static let shardCount = 16
    /// Past this many users remembered per shard the memory is let go: the database still counts each user once.
    private let maxSeenPerShard: Int
    private let shards: [Shard]

    public init(maxRemembered: Int = 1 << 20) {
        maxSeenPerShard = max(1, maxRemembered / Self.shardCount)
        shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    public func record(appId: Int64, userId: String) {
        let entry = Entry(day: .today, appId: appId, userId: userId)
        var hasher = Hasher()
        hasher.combine(appId)
        hasher.combine(userId)
        let shard = shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(Self.shardCount))]
        shard.state.withLock { state in
            if state.day != entry.day || state.seen.count >= maxSeenPerShard {
                state.day = entry.day
                state.seen.removeAll()
            }
            if state.seen.insert(entry).inserted { state.pending.append(entry) }
        }
    }

    func take() -> [Entry] {
        shards.flatMap { shard in
            shard.state.withLock { state in
                defer { state.pending.removeAll() }
                return state.pending
            }
        }
    }

    func putBack(_ entries: [Entry]) {
        guard !entries.isEmpty else { return }
        shards[0].state.withLock { $0.pending.append(contentsOf: entries) }
    }

    /// Inserts the sightings and adds the new ones to the day's counter, in one statement; drops the per-user rows of
    /// days before yesterday (a late flush may still add to yesterday).
    static func write(_ entries: [Entry], on database: PostgresClient) async throws {
        if !entries.isEmpty {
            _ = try await database.query(
                """
                WITH inserted AS (
                    INSERT INTO app_daily_active_users (day, app_id, user_id)
                    SELECT u.day, u.app, u.usr
                    FROM unnest(\(PostgresTextArray(entries.map(\.day.iso)))::date[],
                                \(PostgresTextArray(entries.map { String($0.appId) }))::bigint[],
                                \(PostgresTextArray(entries.map(\.userId)))::text[]) AS u(day, app, usr)
                    JOIN apps a ON a.id = u.app
                    ORDER BY 1, 2, 3
                    ON CONFLICT DO NOTHING
                    RETURNING day, app_id)
                INSERT INTO app_daily_counters AS c (app_id, day, active_users)
                SELECT app_id, day, count(*) FROM inserted GROUP BY app_id, day ORDER BY app_id, day
                ON CONFLICT (app_id, day) DO UPDATE SET active_users = c.active_users + EXCLUDED.active_users
                """)
        }
        _ = try await database.query(
            """
            DELETE FROM app_daily_active_users WHERE day < \(UTCDay.today.adding(days: -1).iso)::date
            """)
    }
}

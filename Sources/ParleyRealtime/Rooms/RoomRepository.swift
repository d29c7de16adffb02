import Foundation
import ParleyPostgres

/// Rooms, their bounded history and their online counts in PostgreSQL (migrations/0034).
struct RoomRepository: Sendable {
    let database: PostgresClient

    private static let messageColumns =
        "id, app_id, room_id, from_id, msg_type, content, extra, client_msg_id, command, created_at"

    func create(appId: Int64, name: String, creatorId: String?, ex: String?) async throws -> Room {
        let row = try await database.query(
            """
            INSERT INTO rooms (app_id, name, creator_id, ex) VALUES (\(appId), \(name), \(creatorId), \(ex))
            RETURNING id, created_at
            """)[0]
        return Room(
            id: try row.decode("id"), appId: appId, name: name, creatorId: creatorId, ex: ex,
            createdAt: try row.decode("created_at"))
    }

    /// The room, unless it does not exist in the app or was dismissed.
    func find(_ key: RoomKey) async throws -> Room? {
        let rows = try await database.query(
            """
            SELECT id, name, creator_id, ex, created_at FROM rooms
            WHERE app_id = \(key.appId) AND id = \(key.roomId) AND dismissed_at IS NULL
            """)
        guard let row = rows.first else { return nil }
        return Room(
            id: try row.decode("id"), appId: key.appId, name: try row.decode("name"),
            creatorId: try row.decode("creator_id"), ex: try row.decode("ex"), createdAt: try row.decode("created_at"))
    }

    /// Marks the room dismissed and drops its history; false when it was not there (or dismissed already).
    func dismiss(_ key: RoomKey) async throws -> Bool {
        let rows = try await database.query(
            """
            WITH dismissed AS (
                UPDATE rooms SET dismissed_at = now()
                WHERE app_id = \(key.appId) AND id = \(key.roomId) AND dismissed_at IS NULL
                RETURNING id
            ), emptied AS (
                DELETE FROM room_messages WHERE room_id IN (SELECT id FROM dismissed)
            )
            SELECT id FROM dismissed
            """)
        return !rows.isEmpty
    }

    /// One INSERT; the room must still be there (else nil: it was dismissed meanwhile).
    func insert(
        _ key: RoomKey, fromId: String, msgType: String, content: String, extra: String?, clientMsgId: String?,
        command: Bool
    ) async throws -> RoomMessage? {
        let rows = try await database.query(
            """
            INSERT INTO room_messages (app_id, room_id, from_id, msg_type, content, extra, client_msg_id, command)
            SELECT \(key.appId), id, \(fromId), \(msgType), \(content), \(extra), \(clientMsgId), \(command)
            FROM rooms WHERE app_id = \(key.appId) AND id = \(key.roomId) AND dismissed_at IS NULL
            RETURNING id, created_at
            """)
        guard let row = rows.first else { return nil }
        return RoomMessage(
            id: try row.decode("id"), appId: key.appId, roomId: key.roomId, fromId: fromId, msgType: msgType,
            content: content, extra: extra, clientMsgId: clientMsgId, command: command,
            createdAt: try row.decode("created_at"))
    }

    /// Messages by id (a relayed message too large to travel inline).
    func messages(ids: [Int64]) async throws -> [RoomMessage] {
        guard !ids.isEmpty else { return [] }
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.messageColumns) FROM room_messages
            WHERE id = ANY(\(PostgresTextArray(ids.map(String.init)))::bigint[])
            """)
        return try rows.map(Self.message)
    }

    /// A page of the room's history as `query` asks, newest first, read from the newest `bound.messages` within
    /// `bound.hours` only: what the prune has not deleted yet is invisible all the same.
    func history(_ key: RoomKey, _ query: RoomHistoryQuery, bound: RoomHistoryBound) async throws
        -> (messages: [RoomMessage], hasMore: Bool)
    {
        let begin = query.begin.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        // `end` is inclusive to the millisecond: stored times have microseconds.
        let end = query.end.map { Date(timeIntervalSince1970: Double($0 + 1) / 1000) }
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.messageColumns) FROM (
                SELECT \(unescaped: Self.messageColumns) FROM room_messages
                WHERE room_id = \(key.roomId) AND app_id = \(key.appId) AND NOT command
                  AND created_at > now() - make_interval(hours => \(bound.hours)::int)
                ORDER BY id DESC LIMIT \(bound.messages)
            ) recent
            WHERE (\(query.cursor == nil) OR id < \(query.cursor ?? 0))
              AND (\(begin == nil) OR created_at >= \(begin ?? Date(timeIntervalSince1970: 0)))
              AND (\(end == nil) OR created_at < \(end ?? Date(timeIntervalSince1970: 0)))
            ORDER BY id DESC LIMIT \(query.limit + 1)
            """)
        var messages = try rows.map(Self.message)
        let hasMore = messages.count > query.limit
        if hasMore { messages.removeLast() }
        return (messages, hasMore)
    }

    /// Deletes what the bound hides: messages older than `bound.hours`, and each room's beyond its newest
    /// `bound.messages` (commands count toward neither: they are only kept as long as the hours allow). Returns how
    /// many went.
    func prune(bound: RoomHistoryBound) async throws -> Int {
        let aged = try await database.query(
            """
            WITH gone AS (
                DELETE FROM room_messages WHERE created_at <= now() - make_interval(hours => \(bound.hours)::int)
                RETURNING 1
            ) SELECT count(*)::bigint AS n FROM gone
            """)
        let overflow = try await database.query(
            """
            WITH cutoffs AS (
                SELECT r.room_id, (
                    SELECT m.id FROM room_messages m WHERE m.room_id = r.room_id AND NOT m.command
                    ORDER BY m.id DESC OFFSET \(bound.messages) LIMIT 1
                ) AS cutoff
                FROM (SELECT DISTINCT room_id FROM room_messages) r
            ), gone AS (
                DELETE FROM room_messages d USING cutoffs c
                WHERE d.room_id = c.room_id AND d.id <= c.cutoff
                RETURNING 1
            ) SELECT count(*)::bigint AS n FROM gone
            """)
        return Int(try aged[0].decode("n", as: Int64.self) + overflow[0].decode("n", as: Int64.self))
    }

    // MARK: Online counts

    /// This instance's connections inside `counts`' rooms (0: none any more).
    func writeOnline(instanceId: String, _ counts: [(key: RoomKey, online: Int)]) async throws {
        guard !counts.isEmpty else { return }
        let apps = counts.map { String($0.key.appId) }
        let rooms = counts.map { String($0.key.roomId) }
        let online = counts.map { String($0.online) }
        _ = try await database.query(
            """
            WITH given AS (
                SELECT * FROM unnest(\(PostgresTextArray(apps))::bigint[], \(PostgresTextArray(rooms))::bigint[],
                                     \(PostgresTextArray(online))::int[]) AS g(app_id, room_id, online)
            ), removed AS (
                DELETE FROM room_online o USING given g
                WHERE o.instance_id = \(instanceId) AND o.room_id = g.room_id AND g.online = 0
            )
            INSERT INTO room_online (instance_id, app_id, room_id, online)
            SELECT \(instanceId), app_id, room_id, online FROM given WHERE online > 0
            ON CONFLICT (room_id, instance_id) DO UPDATE SET online = EXCLUDED.online
            """)
    }

    /// Connections inside the room on instances other than `exceptInstance`, heard from within `staleSeconds`.
    func onlineElsewhere(_ key: RoomKey, exceptInstance: String?, staleSeconds: Int) async throws -> Int {
        let row = try await database.query(
            """
            SELECT coalesce(sum(o.online), 0)::bigint AS n FROM room_online o
            JOIN realtime_instances i ON i.id = o.instance_id
                 AND i.last_seen > now() - make_interval(secs => \(staleSeconds))
            WHERE o.room_id = \(key.roomId) AND o.app_id = \(key.appId)
              AND o.instance_id <> \(exceptInstance ?? "")
            """)[0]
        return Int(try row.decode("n", as: Int64.self))
    }

    private static func message(_ row: PostgresRow) throws -> RoomMessage {
        RoomMessage(
            id: try row.decode("id"), appId: try row.decode("app_id"), roomId: try row.decode("room_id"),
            fromId: try row.decode("from_id"), msgType: try row.decode("msg_type"), content: try row.decode("content"),
            extra: try row.decode("extra"), clientMsgId: try row.decode("client_msg_id"),
            command: try row.decode("command"), createdAt: try row.decode("created_at"))
    }
}

/// How much history a room keeps: its newest `messages` within `hours` (`PARLEY_ROOM_HISTORY_MESSAGES`,
/// `PARLEY_ROOM_HISTORY_HOURS`).
struct RoomHistoryBound: Sendable, Equatable {
    var messages: Int
    var hours: Int
}

import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyPostgres

/// One entry of the change stream as stored: a new message, or a row of `changes` with the message it is about.
struct StreamEntry: Sendable {
    var cursor: SyncCursor
    var kind: String
    var conversationId: String
    var payload: JSONValue
    var message: IMMessage?
}

/// Reads a user's change stream (migrations/0003 explains the ordering). Rows are returned only below the
/// snapshot's xmin, so a cursor never skips a transaction that commits later, even after a crash (`StreamHorizon`).
/// The change log is partitioned by xid (migrations/0041): the `c.xid >= cursor` condition, implied by the row
/// comparison, is spelled out so that only the partitions at or after the cursor are read.
struct SyncRepository: Sendable {
    let database: PostgresClient

    /// The cursor for "now": everything below the current xmin is final (`StreamHorizon`).
    func currentCursor() async throws -> SyncCursor {
        let rows = try await database.query(
            "SELECT h.xmin::text AS horizon, h.on_standby FROM (SELECT \(unescaped: StreamHorizon.columns)) h")
        let horizon = SyncCursor(xid: UInt64(try rows[0].decode("horizon", as: String.self)) ?? 0, position: 0)
        try await StreamHorizon.settle(rows[0], horizon: horizon.xid, on: database)
        return horizon
    }

    /// Up to `limit` entries after `cursor`, in stream order, and the cursor to continue from.
    func changes(appId: Int64, userId: String, after cursor: SyncCursor, limit: Int) async throws
        -> (entries: [StreamEntry], next: SyncCursor, hasMore: Bool)
    {
        let xid = String(cursor.xid)
        let position = cursor.position
        let messageColumns = MessageRepository.columns.split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .map { "mm.\($0) AS msg_\($0)" }.joined(separator: ", ")
        let rows = try await database.query(
            """
            WITH horizon AS (SELECT \(unescaped: StreamHorizon.columns),
                                    (SELECT pruned_through > '0'::xid8 AND pruned_through >= \(xid)::xid8 FROM sync_horizon) AS expired),
            mine AS (
                SELECT conversation_id, clear_seq FROM conversation_members
                WHERE app_id = \(appId) AND user_id = \(userId)),
            stream AS (
                SELECT m.xid, m.id AS position, 'message' AS kind, m.conversation_id, m.id AS message_id,
                       NULL::text AS payload
                FROM mine JOIN messages m ON m.app_id = \(appId) AND m.conversation_id = mine.conversation_id
                WHERE (m.xid, m.id) > (\(xid)::xid8, \(position)) AND m.xid < (SELECT xmin FROM horizon)
                  AND m.seq > mine.clear_seq
                UNION ALL
                SELECT c.xid, c.id, c.kind, c.conversation_id, c.message_id, c.payload
                FROM mine JOIN sync_changes c ON c.app_id = \(appId) AND c.conversation_id = mine.conversation_id
                                             AND c.user_id IS NULL
                WHERE (c.xid, c.id) > (\(xid)::xid8, \(position)) AND c.xid >= \(xid)::xid8
                  AND c.xid < (SELECT xmin FROM horizon)
                UNION ALL
                SELECT c.xid, c.id, c.kind, c.conversation_id, c.message_id, c.payload
                FROM sync_changes c
                WHERE c.app_id = \(appId) AND c.user_id = \(userId)
                  AND (c.xid, c.id) > (\(xid)::xid8, \(position)) AND c.xid >= \(xid)::xid8
                  AND c.xid < (SELECT xmin FROM horizon)
                ORDER BY 1, 2
                LIMIT \(limit + 1))
            SELECT h.xmin::text AS horizon, h.on_standby, h.expired, s.xid::text AS stream_xid, s.position,
                   s.kind, s.conversation_id, s.payload, mine.clear_seq AS visible_after,
                   \(unescaped: messageColumns)
            FROM horizon h
            LEFT JOIN (stream s
                       LEFT JOIN messages mm ON mm.id = s.message_id
                       LEFT JOIN mine ON mine.conversation_id = s.conversation_id) ON true
            ORDER BY s.xid, s.position
            """)
        if try rows[0].decode("expired", as: Bool?.self) == true { throw APIError.cursorExpired }
        // One row even when nothing changed: the horizon must come from this statement's own snapshot.
        let horizon = SyncCursor(xid: UInt64(try rows[0].decode("horizon", as: String.self)) ?? 0, position: 0)
        try await StreamHorizon.settle(rows[0], horizon: horizon.xid, on: database)
        var entries: [StreamEntry] = []
        entries.reserveCapacity(rows.count)
        var last = cursor
        var returned = 0
        for row in rows where !row.isNull("stream_xid") {
            returned += 1
            if returned > limit { break }
            let entryCursor = SyncCursor(
                xid: UInt64(try row.decode("stream_xid", as: String.self)) ?? 0,
                position: try row.decode("position"))
            last = entryCursor
            let message = row.isNull("msg_id") ? nil : try MessageRepository.decode(row, prefix: "msg_")
            // Revokes and edits of messages the user cleared are not theirs to see any more.
            if let message, let visibleAfter = try row.decode("visible_after", as: Int64?.self),
                message.seq <= visibleAfter
            {
                continue
            }
            let payloadText = try row.decode("payload", as: String?.self)
            entries.append(
                StreamEntry(
                    cursor: entryCursor, kind: try row.decode("kind"),
                    conversationId: try row.decode("conversation_id", as: String?.self) ?? "",
                    payload: try payloadText.map { try MessageRepository.parseStored($0) } ?? .null,
                    message: message))
        }
        if returned > limit { return (entries, last, true) }
        // Everything below the horizon has been returned: continue from it (later transactions get higher xids).
        return (entries, horizon.atLeast(last).atLeast(cursor), false)
    }
}

extension SyncRepository {
    /// What one pass of `maintainChangeLog` did.
    struct ChangeLogMaintenance: Sendable, Equatable {
        var partitionsAdded: Int
        var partitionsDropped: Int
        var rowsDeleted: Int
        var unpartitionedDropped: Bool

        static let none = ChangeLogMaintenance(
            partitionsAdded: 0, partitionsDropped: 0, rowsDeleted: 0, unpartitionedDropped: false)
    }

    /// Keeps the change log's xid ranges ahead of the xids in use (each sized to about `span` of the recent xid rate,
    /// at least `minimumWidth`), drops ranges whose changes are all older than `days` and deletes such changes
    /// outside the ranges, recording how far they went (migrations/0041). One step per statement, each its own
    /// transaction (migrations/0042: a pass in one transaction deadlocked with syncs), at most `maxSteps`.
    func maintainChangeLog(
        retentionDays days: Int, span: Duration = .seconds(86_400), minimumWidth: Int64 = 1000, maxSteps: Int = 64
    ) async throws -> ChangeLogMaintenance {
        var done = ChangeLogMaintenance.none
        for _ in 0..<maxSteps {
            let rows = try await database.query(
                """
                SELECT * FROM parley_maintain_changes(\(Int32(days)), make_interval(secs => \(span.secondsDouble)),
                                                      \(minimumWidth))
                """)
            done.partitionsAdded += Int(try rows[0].decode("partitions_added", as: Int32.self))
            done.partitionsDropped += Int(try rows[0].decode("partitions_dropped", as: Int32.self))
            done.rowsDeleted += Int(try rows[0].decode("rows_deleted", as: Int64.self))
            done.unpartitionedDropped = try done.unpartitionedDropped || rows[0].decode("unpartitioned_dropped")
            if try rows[0].decode("finished", as: Bool.self) { break }
        }
        return done
    }
}

extension SyncCursor {
    /// Cursors never move backwards.
    func atLeast(_ other: SyncCursor) -> SyncCursor {
        (xid, position) >= (other.xid, other.position) ? self : other
    }
}

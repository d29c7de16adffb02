import Foundation
import ParleyJSON
import ParleyPostgres

/// The `reports` table.
public struct ReportRepository: Sendable {
    let database: PostgresClient

    public init(database: PostgresClient) { self.database = database }

    static let columns =
        "id, reporter_id, target_type, target_id, reason, note, message_snapshot::text AS message_snapshot, created_at"

    static func decode(_ row: PostgresRow) throws -> Report {
        let snapshot: String? = try row.decode("message_snapshot")
        return Report(
            id: String(try row.decode("id", as: Int64.self)), reporterId: try row.decode("reporter_id"),
            targetType: ReportTargetType(rawValue: try row.decode("target_type")) ?? .user,
            targetId: try row.decode("target_id"), reason: try row.decode("reason"), note: try row.decode("note"),
            message: try snapshot.map { try JSONValue.parse($0) },
            createdAt: try row.decode("created_at"))
    }

    /// Stores the report, or returns the one this reporter already filed on this target (unchanged) with `false`.
    func insert(
        appId: Int64, reporterId: String, targetType: ReportTargetType, targetId: String, reason: String,
        note: String?, messageSnapshot: [UInt8]?
    ) async throws -> (report: Report, created: Bool) {
        let snapshot = messageSnapshot.map { String(decoding: $0, as: UTF8.self) }
        let rows = try await database.query(
            """
            WITH inserted AS (
                INSERT INTO reports (app_id, reporter_id, target_type, target_id, reason, note, message_snapshot)
                VALUES (\(appId), \(reporterId), \(targetType.rawValue), \(targetId), \(reason), \(note),
                        \(snapshot)::jsonb)
                ON CONFLICT (app_id, reporter_id, target_type, target_id) DO NOTHING
                RETURNING \(unescaped: Self.columns), true AS created
            )
            SELECT * FROM inserted
            UNION ALL
            SELECT \(unescaped: Self.columns), false AS created FROM reports
            WHERE app_id = \(appId) AND reporter_id = \(reporterId) AND target_type = \(targetType.rawValue)
              AND target_id = \(targetId) AND NOT EXISTS (SELECT 1 FROM inserted)
            """)
        return (try Self.decode(rows[0]), try rows[0].decode("created"))
    }

    func userExists(appId: Int64, userId: String) async throws -> Bool {
        try await !database.query("SELECT 1 FROM users WHERE app_id = \(appId) AND id = \(userId)").isEmpty
    }

    /// The app's reports, newest first: those filed before the report `before` (a page's last id) when given, of
    /// one kind of target when `targetType` is given.
    public func list(
        appId: Int64, limit: Int, before: Int64? = nil, targetType: ReportTargetType? = nil
    ) async throws -> [Report] {
        try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM reports r
            WHERE r.app_id = \(appId)
              AND (\(targetType?.rawValue)::text IS NULL OR r.target_type = \(targetType?.rawValue))
              AND (\(before)::bigint IS NULL OR (r.created_at, r.id) < (
                   SELECT c.created_at, c.id FROM reports c WHERE c.app_id = \(appId) AND c.id = \(before)))
            ORDER BY r.created_at DESC, r.id DESC LIMIT \(limit)
            """
        ).map(Self.decode)
    }
}

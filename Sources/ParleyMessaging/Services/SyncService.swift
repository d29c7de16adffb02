import ParleyAuth
import ParleyJSON
import ParleyPostgres

/// Catch-up after a reconnect: every change the caller may see since their cursor, in commit order, each once.
///
/// A lag-tolerant read (`reads`): a hot standby's snapshot gives the same guarantee the cursor relies on (no
/// transaction below its xmin commits later, on the standby as on the primary), and the standby has replayed
/// everything committed before the request arrived, so a page there is what the primary would answer or a
/// prefix of it in stream order.
public struct SyncService: Sendable {
    let repository: SyncRepository
    let reads: PostgresReadRouter

    public static let defaultPageSize = 200
    public static let maxPageSize = 500

    /// Without a cursor: no changes and the cursor for "now" (load the conversation list and history after
    /// taking it, and nothing that happens meanwhile is missed).
    public func sync(after cursor: SyncCursor?, limit: Int, for principal: Principal) async throws -> SyncPage {
        let repository = repository
        guard let cursor else {
            let now = try await reads.read { try await repository.on($0).currentCursor() }
            return SyncPage(changes: [], cursor: now.description, hasMore: false)
        }
        let page = try await reads.read { database in
            try await repository.on(database).changes(
                appId: principal.appId, userId: principal.userId, after: cursor, limit: limit)
        }
        return SyncPage(
            changes: page.entries.compactMap(Self.render), cursor: page.next.description, hasMore: page.hasMore)
    }

    static func render(_ entry: StreamEntry) -> SyncChange? {
        let payload = entry.payload.objectValue ?? JSONObject()
        switch entry.kind {
        case "message":
            guard let message = entry.message else { return nil }
            return SyncChange(type: "message", message: message, fields: JSONObject())
        case "edit":
            guard let message = entry.message else { return nil }
            return SyncChange(type: "edit", message: message, fields: JSONObject())
        case "revoke":
            guard let message = entry.message else { return nil }
            return SyncChange(
                type: "revoke", message: nil,
                fields: JSONObject([
                    ("msgId", .string(message.id)), ("conversationId", .string(message.conversationId)),
                    ("operatorId", payload["operatorId"] ?? .null), ("seq", .number(JSONNumber(message.seq))),
                ]))
        case "read":
            return SyncChange(
                type: "read", message: nil,
                fields: JSONObject([
                    ("conversationId", .string(entry.conversationId)), ("userId", payload["userId"] ?? .null),
                    ("seq", payload["seq"] ?? .null),
                ]))
        case "conversation", "membership":
            return SyncChange(type: entry.kind, message: nil, fields: payload)
        default:
            guard UserEventKind(rawValue: entry.kind) != nil || ConversationEventKind(rawValue: entry.kind) != nil
            else { return nil }
            return SyncChange(type: entry.kind, message: nil, fields: payload)
        }
    }
}

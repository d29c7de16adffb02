import ParleyJSON
import ParleyPostgres

/// Records a conversation event in the transaction that made the change (sync replays it to every member exactly when
/// the change committed) and publishes it after the commit. One way for reactions and pins.
struct ConversationEvents: Sendable {
    let events: MessagingEvents

    /// One conversation-wide row of `changes`, on the caller's transaction.
    func record(
        _ kind: ConversationEventKind, data: JSONValue, appId: Int64, conversationId: String, messageId: Int64,
        on connection: PostgresConnection
    ) async throws {
        _ = try await connection.query(
            """
            INSERT INTO changes (app_id, conversation_id, kind, message_id, payload)
            VALUES (\(appId), \(conversationId), \(kind.rawValue), \(messageId), \(data.serializedString))
            """)
    }

    /// After the commit: to every member's devices but the one whose request caused it (it has the answer).
    func publish(
        _ kind: ConversationEventKind, data: JSONValue, appId: Int64, conversationId: String, origin: String?
    ) {
        events.publish(
            MessagingEvent(
                appId: appId, conversationId: conversationId, audience: .conversationMembers,
                origin: origin, payload: .conversationEvent(kind, data)))
    }
}

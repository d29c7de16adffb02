import ParleyJSON
import ParleyPostgres

/// One social-graph event for some users: their devices get it live (`kind` is the frame's type, `data` its data) and
/// through sync (a per-user row of `changes` each).
public struct UserEvent: Sendable {
    public var kind: UserEventKind
    public var data: JSONValue
    public var recipients: [String]

    public init(kind: UserEventKind, data: JSONValue, recipients: [String]) {
        self.kind = kind
        self.data = data
        self.recipients = recipients
    }
}

/// Records user events in the transaction that made the change (so sync has them exactly when the change
/// committed) and publishes them after the commit. One way for every feature that writes such events.
public struct UserEvents: Sendable {
    let events: MessagingEvents

    /// Writes one `changes` row per recipient of every event, in one statement, on the caller's transaction.
    public func record(_ userEvents: [UserEvent], appId: Int64, on connection: PostgresConnection) async throws {
        var users: [String] = []
        var kinds: [String] = []
        var payloads: [String] = []
        for event in userEvents {
            let payload = event.data.serializedString
            for user in Set(event.recipients) {
                users.append(user)
                kinds.append(event.kind.rawValue)
                payloads.append(payload)
            }
        }
        guard !users.isEmpty else { return }
        _ = try await connection.query(
            """
            INSERT INTO changes (app_id, user_id, kind, payload)
            SELECT \(appId), u.user_id, u.kind, u.payload
            FROM unnest(\(PostgresTextArray(users))::text[], \(PostgresTextArray(kinds))::text[],
                        \(PostgresTextArray(payloads))::text[]) AS u(user_id, kind, payload)
            """)
    }

    /// After the commit: to every device of the recipients but the one whose request caused it (it has the answer).
    public func publish(_ userEvents: [UserEvent], appId: Int64, origin: String?) {
        Self.messagingEvents(userEvents, appId: appId, origin: origin).forEach(events.publish)
    }

    /// The events `publish` sends, for a flow that publishes its events together after its commit.
    static func messagingEvents(_ userEvents: [UserEvent], appId: Int64, origin: String?)
        -> [MessagingEvent]
    {
        userEvents.compactMap { event in
            guard !event.recipients.isEmpty else { return nil }
            var unique: [String] = []
            var seen = Set<String>()
            for user in event.recipients where seen.insert(user).inserted { unique.append(user) }
            return MessagingEvent(
                appId: appId, conversationId: "", audience: .users(unique), origin: origin,
                payload: .userEvent(event.kind, event.data))
        }
    }
}

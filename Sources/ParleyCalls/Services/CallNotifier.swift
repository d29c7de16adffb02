import ParleyPostgres

/// What happens beside the live events, for devices with no socket: ParleyApp hands in the offline push (VoIP on
/// invite, a cancel when the call ends before they answered). Each runs inside the transition's transaction, on its
/// connection, so what it queues (push's outbox) commits or rolls back with the transition; it must only write rows,
/// never wait on anything outside the database. Who has a live socket is the deliverer's question, asked when it
/// delivers (a callee who connects before then rings on the socket only).
public struct CallNotifier: Sendable {
    /// A call rings: its ringing callees.
    public var invited:
        @Sendable (_ call: Call, _ ringingCalleeIds: [String], _ connection: PostgresConnection) async throws -> Void
    /// A callee answered on one device (the session): their other devices, which a VoIP push may have rung, stop
    /// ringing.
    public var answered:
        @Sendable (_ call: Call, _ userId: String, _ sessionId: String, _ connection: PostgresConnection) async throws
            ->
            Void
    /// The call ended: the callees who never answered it (their rung devices stop ringing).
    public var ended:
        @Sendable (_ call: Call, _ calleeIdsWhoNeverAnswered: [String], _ connection: PostgresConnection) async throws
            ->
            Void

    public init(
        invited: @escaping @Sendable (Call, [String], PostgresConnection) async throws -> Void,
        answered: @escaping @Sendable (Call, String, String, PostgresConnection) async throws -> Void = { _, _, _, _ in
        },
        ended: @escaping @Sendable (Call, [String], PostgresConnection) async throws -> Void
    ) {
        self.invited = invited
        self.answered = answered
        self.ended = ended
    }

    /// Nothing beyond the live events.
    public static let none = CallNotifier(invited: { _, _, _ in }, ended: { _, _, _ in })
}

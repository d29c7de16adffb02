import Foundation
import ParleyJSON
import ParleyPostgres

/// Calls and their participants in PostgreSQL (migrations/0026). Transitions run on a caller's transaction with the
/// call row locked (`lock`); readers take no lock.
struct CallRepository: Sendable {
    let database: PostgresClient

    private static let callColumns = """
        c.id, c.app_id, c.caller_id, c.media_type, c.user_data, c.state, c.timeout_seconds, c.timeout_at,
        c.created_at, c.started_at, c.ended_at, c.end_reason, c.ended_by
        """

    /// The database's clock: every instance reads the same one, and the sweep compares with it.
    func now(on connection: PostgresConnection) async throws -> Date {
        try await connection.query("SELECT clock_timestamp() AS now")[0].decode("now")
    }

    func insert(_ call: Call, on connection: PostgresConnection) async throws {
        _ = try await connection.query(
            """
            INSERT INTO calls (id, app_id, caller_id, media_type, user_data, state, timeout_seconds, timeout_at,
                               created_at, started_at, ended_at, end_reason, ended_by)
            VALUES (\(call.id), \(call.appId), \(call.callerId), \(call.mediaType.rawValue), \(call.userData),
                    \(call.state.rawValue), \(call.timeoutSeconds), \(call.timeoutAt), \(call.createdAt),
                    \(call.startedAt), \(call.endedAt), \(call.endReason?.rawValue), \(call.endedBy))
            """)
        let p = Self.participantArrays(call)
        _ = try await connection.query(
            """
            INSERT INTO call_participants (call_id, app_id, user_id, position, state, accepted_session_id,
                                           joined_at, left_at)
            SELECT \(call.id), \(call.appId), p.user_id, p.position - 1, p.state, p.session, \(unescaped: Self.fromMicros("p.joined_at")),
                   \(unescaped: Self.fromMicros("p.left_at"))
            FROM unnest(\(p.users)::text[], \(p.states)::text[], \(p.sessions)::text[], \(p.joined)::text[],
                        \(p.left)::text[]) WITH ORDINALITY AS p(user_id, state, session, joined_at, left_at, position)
            """)
    }

    /// Writes back what a transition changed (the call row and every participant's).
    func update(_ call: Call, on connection: PostgresConnection) async throws {
        _ = try await connection.query(
            """
            UPDATE calls SET state = \(call.state.rawValue), timeout_at = \(call.timeoutAt),
                started_at = \(call.startedAt), ended_at = \(call.endedAt), end_reason = \(call.endReason?.rawValue),
                ended_by = \(call.endedBy)
            WHERE id = \(call.id)
            """)
        let p = Self.participantArrays(call)
        _ = try await connection.query(
            """
            UPDATE call_participants cp SET state = p.state, accepted_session_id = p.session,
                joined_at = \(unescaped: Self.fromMicros("p.joined_at")), left_at = \(unescaped: Self.fromMicros("p.left_at"))
            FROM unnest(\(p.users)::text[], \(p.states)::text[], \(p.sessions)::text[], \(p.joined)::text[],
                        \(p.left)::text[]) AS p(user_id, state, session, joined_at, left_at)
            WHERE cp.call_id = \(call.id) AND cp.user_id = p.user_id
            """)
    }

    /// The call, its row locked until the transaction ends; nil for an unknown id or another app's call.
    func lock(id: String, appId: Int64, on connection: PostgresConnection) async throws -> Call? {
        let rows = try await connection.query(
            "SELECT \(unescaped: Self.callColumns) FROM calls c WHERE c.id = \(id) AND c.app_id = \(appId) FOR UPDATE")
        guard let row = rows.first else { return nil }
        return try await Self.call(row, participants: try await participants(ids: [id], query: connection.query))
            .first
    }

    /// For the sweep: the call locked, when its timeout is due and no other transaction holds it (that one decides).
    func lockDue(id: String, on connection: PostgresConnection) async throws -> Call? {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: Self.callColumns) FROM calls c
            WHERE c.id = \(id) AND c.timeout_at <= clock_timestamp()
            FOR UPDATE SKIP LOCKED
            """)
        guard let row = rows.first else { return nil }
        return try await Self.call(row, participants: try await participants(ids: [id], query: connection.query))
            .first
    }

    /// Calls whose timeout has passed, oldest deadline first.
    func dueCallIds(limit: Int) async throws -> [String] {
        try await database.query(
            """
            SELECT id FROM calls WHERE timeout_at <= clock_timestamp() ORDER BY timeout_at LIMIT \(limit)
            """
        ).map { try $0.decode("id") }
    }

    /// A call `userId` takes part in (no lock).
    func find(id: String, appId: Int64, userId: String) async throws -> Call? {
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.callColumns) FROM calls c
            WHERE c.id = \(id) AND c.app_id = \(appId)
              AND EXISTS (SELECT 1 FROM call_participants p WHERE p.call_id = c.id AND p.user_id = \(userId))
            """)
        guard let row = rows.first else { return nil }
        return try await Self.call(row, participants: try await participants(ids: [id], query: database.query)).first
    }

    /// The calls that ring for `userId` or that they are in, newest first.
    func live(appId: Int64, userId: String) async throws -> [Call] {
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.callColumns) FROM call_participants me
            JOIN calls c ON c.id = me.call_id
            WHERE me.app_id = \(appId) AND me.user_id = \(userId) AND me.state IN ('ringing', 'accepted')
              AND c.state <> 'ended'
            ORDER BY c.created_at DESC, c.id
            """)
        guard !rows.isEmpty else { return [] }
        let ids: [String] = try rows.map { try $0.decode("id") }
        let participants = try await participants(ids: ids, query: database.query)
        var calls: [Call] = []
        for row in rows { calls += try await Self.call(row, participants: participants) }
        return calls
    }

    /// Of `userIds`, those in a call under way (accepted in a call that has not ended): they answer busy.
    func busy(appId: Int64, userIds: [String], on connection: PostgresConnection) async throws -> Set<String> {
        let rows = try await connection.query(
            """
            SELECT DISTINCT p.user_id FROM call_participants p JOIN calls c ON c.id = p.call_id
            WHERE p.app_id = \(appId) AND p.user_id = ANY(\(PostgresTextArray(userIds))::text[])
              AND p.state = 'accepted' AND c.state <> 'ended'
            """)
        return Set(try rows.map { try $0.decode("user_id", as: String.self) })
    }

    /// Takes each user's call lock until the transaction ends, in id order (no deadlock between two lockers). Whoever
    /// may put a user into a call (an invite, for its caller and callees; an accept) reads `busy` under it, so "in a
    /// call" is exclusive per user across devices and instances. Taken before any call row.
    func lockUsers(appId: Int64, _ userIds: [String], on connection: PostgresConnection) async throws {
        for userId in Set(userIds).sorted() {
            _ = try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtextextended('call:' || \(String(appId)) || ':' || \(userId), 0))")
        }
    }

    /// Of `userIds`, those a 1:1 message from `callerId` would be refused to, and why (`parley_direct_verdict`, the
    /// verdict every 1:1 send runs): `peer_refused` (a block) or `not_friend` (the app's friends-only policy).
    func directVerdicts(appId: Int64, callerId: String, userIds: [String], on connection: PostgresConnection)
        async throws -> [String: String]
    {
        let rows = try await connection.query(
            """
            SELECT u.id, d.verdict FROM unnest(\(PostgresTextArray(userIds))::text[]) AS u(id)
            JOIN LATERAL parley_direct_verdict(\(appId), \(callerId), u.id) d ON d.verdict IS NOT NULL
            """)
        var verdicts: [String: String] = [:]
        for row in rows { verdicts[try row.decode("id")] = try row.decode("verdict") }
        return verdicts
    }

    /// The ids of the calls that have not ended in which `userId` rings or is, in id order (the order of locking).
    func liveCallIds(appId: Int64, userId: String, on connection: PostgresConnection) async throws -> [String] {
        try await connection.query(
            """
            SELECT c.id FROM call_participants p JOIN calls c ON c.id = p.call_id
            WHERE p.app_id = \(appId) AND p.user_id = \(userId) AND p.state IN ('ringing', 'accepted')
              AND c.state <> 'ended'
            ORDER BY c.id
            """
        ).map { try $0.decode("id") }
    }

    /// Of `userIds`, those that are users of the app (not deleted).
    func existingUsers(appId: Int64, userIds: [String], on connection: PostgresConnection) async throws -> Set<String> {
        let rows = try await connection.query(
            """
            SELECT id FROM users
            WHERE app_id = \(appId) AND id = ANY(\(PostgresTextArray(userIds))::text[]) AND deleted_at IS NULL
            """)
        return Set(try rows.map { try $0.decode("id", as: String.self) })
    }

    /// Deletes calls that ended more than `hours` ago (their records stay in the conversations).
    func prune(endedBeforeHours hours: Int) async throws -> Int {
        try await database.query(
            "DELETE FROM calls WHERE ended_at < now() - make_interval(hours => \(hours)::integer)"
        ).affectedRows
    }

    // MARK: Rows

    private func participants(
        ids: [String], query: (PostgresQuery) async throws(PostgresError) -> PostgresRows
    ) async throws -> [String: [CallParticipant]] {
        let rows = try await query(
            """
            SELECT call_id, user_id, state, accepted_session_id, joined_at, left_at FROM call_participants
            WHERE call_id = ANY(\(PostgresTextArray(ids))::text[])
            ORDER BY call_id, position
            """)
        var byCall: [String: [CallParticipant]] = [:]
        for row in rows {
            let state = try row.decode("state", as: String.self)
            guard let parsed = ParticipantState(rawValue: state) else {
                throw PostgresError(kind: .decoding, message: "unknown participant state \(state)")
            }
            byCall[try row.decode("call_id"), default: []].append(
                CallParticipant(
                    userId: try row.decode("user_id"), state: parsed,
                    acceptedSessionId: try row.decode("accepted_session_id"), joinedAt: try row.decode("joined_at"),
                    leftAt: try row.decode("left_at")))
        }
        return byCall
    }

    private static func call(_ row: PostgresRow, participants: [String: [CallParticipant]]) async throws -> [Call] {
        let id: String = try row.decode("id")
        func parsed<T: RawRepresentable>(_ column: String, as: T.Type) throws -> T? where T.RawValue == String {
            guard let raw = try row.decode(column, as: String?.self) else { return nil }
            guard let value = T(rawValue: raw) else {
                throw PostgresError(kind: .decoding, message: "unknown \(column) \(raw)")
            }
            return value
        }
        guard let mediaType = try parsed("media_type", as: CallMediaType.self),
            let state = try parsed("state", as: CallState.self)
        else { throw PostgresError(kind: .decoding, message: "a call without media type or state") }
        return [
            Call(
                id: id, appId: try row.decode("app_id"), callerId: try row.decode("caller_id"), mediaType: mediaType,
                userData: try row.decode("user_data"), state: state,
                timeoutSeconds: try row.decode("timeout_seconds"), timeoutAt: try row.decode("timeout_at"),
                createdAt: try row.decode("created_at"), startedAt: try row.decode("started_at"),
                endedAt: try row.decode("ended_at"), endReason: try parsed("end_reason", as: CallEndReason.self),
                endedBy: try row.decode("ended_by"), participants: participants[id] ?? [])
        ]
    }

    private static func participantArrays(_ call: Call) -> (
        users: PostgresTextArray, states: PostgresTextArray, sessions: PostgresTextArray, joined: PostgresTextArray,
        left: PostgresTextArray
    ) {
        let ps = call.participants
        return (
            PostgresTextArray(ps.map(\.userId)), PostgresTextArray(ps.map(\.state.rawValue)),
            PostgresTextArray(optionals: ps.map(\.acceptedSessionId)),
            PostgresTextArray(optionals: ps.map { $0.joinedAt.map(Self.timestamp) }),
            PostgresTextArray(optionals: ps.map { $0.leftAt.map(Self.timestamp) })
        )
    }

    /// Microseconds since 1970, as PostgreSQL keeps times (a time read and written back must not move).
    static func timestamp(_ date: Date) -> String {
        String(Int64((date.timeIntervalSince1970 * 1_000_000).rounded()))
    }

    /// The SQL that turns a column of `timestamp(_:)` texts back into a `timestamptz`.
    static func fromMicros(_ column: String) -> String {
        "timestamptz 'epoch' + \(column)::bigint * interval '1 microsecond'"
    }
}

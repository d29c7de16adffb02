import ParleyMessageModel
import ParleyPostgres

/// The outbox: leasing due jobs, what a job needs (message, recipients' tokens), and its end.
public struct PushJobRepository: Sendable {
    let database: PostgresClient

    public init(database: PostgresClient) { self.database = database }

    public struct Job: Sendable, Equatable {
        public var id: Int64
        public var appId: Int64
        /// The message to push; nil for a call's push.
        public var messageId: Int64?
        /// The call's push (migrations/0029); nil for a message's.
        public var call: CallPush?
        /// Including the current one.
        public var attempts: Int

        public init(id: Int64, appId: Int64, messageId: Int64?, call: CallPush? = nil, attempts: Int) {
            self.id = id
            self.appId = appId
            self.messageId = messageId
            self.call = call
            self.attempts = attempts
        }
    }

    /// Leases up to `limit` due jobs for `leaseSeconds`: other workers skip them (SKIP LOCKED while this runs,
    /// `leased_until` afterwards) until the lease ends, which is how a crashed worker's jobs come back.
    ///
    /// The ids are taken in an `ARRAY(...)` sub-select, which runs once. As `IN (SELECT ... FOR UPDATE)` the planner,
    /// seeing an outbox that was empty when last analyzed, joined it as the inner side of a nested loop over every
    /// job: the locking sub-select ran again, locking up to `limit` rows, for each row of a backlog.
    func lease(limit: Int, leaseSeconds: Int) async throws -> [Job] {
        try await database.query(
            """
            UPDATE push_jobs SET leased_until = now() + make_interval(secs => \(leaseSeconds)), attempts = attempts + 1
            WHERE id = ANY (ARRAY(SELECT id FROM push_jobs
                                  WHERE next_attempt_at <= now() AND (leased_until IS NULL OR leased_until < now())
                                  ORDER BY next_attempt_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED))
            RETURNING id, app_id, message_id, call::text AS call, attempts
            """
        ).map { row in
            Job(
                id: try row.decode("id"), appId: try row.decode("app_id"), messageId: try row.decode("message_id"),
                call: try row.decode("call", as: String?.self).flatMap(CallPush.init(json:)),
                attempts: try row.decode("attempts"))
        }.sorted { $0.id < $1.id }
    }

    func message(appId: Int64, id: Int64) async throws -> PushMessage? {
        try await database.query(
            """
            SELECT m.id, m.app_id, m.conversation_id, m.from_id, m.chat_type, m.msg_type, m.content,
                   m.revoked_at IS NOT NULL AS revoked, coalesce(nullif(u.nickname, ''), m.from_id) AS sender_name,
                   m.push_options->>'title' AS push_title, m.push_options->>'body' AS push_body,
                   m.push_options->>'sound' AS push_sound
            FROM messages m LEFT JOIN users u ON u.app_id = m.app_id AND u.id = m.from_id
            WHERE m.id = \(id) AND m.app_id = \(appId)
            """
        ).first.map { row in
            PushMessage(
                id: try row.decode("id"), appId: try row.decode("app_id"),
                conversationId: try row.decode("conversation_id"), fromId: try row.decode("from_id"),
                chatType: try row.decode("chat_type"), msgType: try row.decode("msg_type"),
                content: try row.decode("content"), revoked: try row.decode("revoked"),
                senderName: try row.decode("sender_name"), pushTitle: try row.decode("push_title"),
                pushBody: try row.decode("push_body"), pushSound: try row.decode("push_sound"))
        }
    }

    /// The device tokens (every vendor's) of the message's recipients, each with whether this job already pushed it: members of the
    /// conversation but the sender who can see the message (joined before it), have not muted it (or are mentioned in
    /// it: a mention gets through a mute), have no live
    /// connection on any instance (instances silent for `staleSeconds` count as gone), through sessions that
    /// are still active (a token of an ended session is never used, even before its unbinding ran).
    func targets(job: Job, message: PushMessage, staleSeconds: Int) async throws -> [(PushTarget, delivered: Bool)] {
        let rows = try await database.query(
            """
            SELECT t.user_id, t.vendor, t.token, t.environment, t.bundle_id, s.language,
                   EXISTS (SELECT 1 FROM push_deliveries d
                           WHERE d.job_id = \(job.id) AND d.vendor = t.vendor AND d.token = t.token) AS delivered
            FROM conversation_members cm
            JOIN messages m ON m.id = \(message.id)
            JOIN push_tokens t ON t.app_id = cm.app_id AND t.user_id = cm.user_id
            JOIN sessions s ON s.id = t.session_id AND s.ended_at IS NULL
            WHERE cm.app_id = \(message.appId) AND cm.conversation_id = \(message.conversationId)
              AND cm.user_id <> \(message.fromId) AND cm.clear_seq < m.seq
              AND (NOT cm.muted OR m.mention_all OR cm.user_id = ANY(m.mention_ids))
              AND NOT EXISTS (
                  SELECT 1 FROM realtime_presence p JOIN realtime_instances i ON i.id = p.instance_id
                  WHERE p.app_id = cm.app_id AND p.user_id = cm.user_id
                    AND i.last_seen > now() - make_interval(secs => \(staleSeconds)))
            ORDER BY t.user_id, t.vendor, t.token
            """)
        return try rows.compactMap(Self.decodeTarget)
    }

    /// The tokens of a call push's users, each with whether this job already pushed it: through sessions still active
    /// but the excepted one; an invite skips users with a live connection on any instance (they ring on their socket),
    /// a cancel skips only the sessions with one (they hear the end on their socket; a user's other devices, rung by
    /// the invite's push, do not).
    func targets(job: Job, call: CallPush, staleSeconds: Int) async throws -> [(PushTarget, delivered: Bool)] {
        let live = call.action == .invite ? "p.user_id = t.user_id" : "p.session_id = t.session_id"
        let rows = try await database.query(
            """
            SELECT t.user_id, t.vendor, t.token, t.environment, t.bundle_id, s.language,
                   EXISTS (SELECT 1 FROM push_deliveries d
                           WHERE d.job_id = \(job.id) AND d.vendor = t.vendor AND d.token = t.token) AS delivered
            FROM push_tokens t
            JOIN sessions s ON s.id = t.session_id AND s.ended_at IS NULL
            WHERE t.app_id = \(job.appId) AND t.user_id = ANY(\(PostgresTextArray(call.userIds))::text[])
              AND t.session_id IS DISTINCT FROM \(call.exceptSessionId)
              AND NOT EXISTS (
                  SELECT 1 FROM realtime_presence p JOIN realtime_instances i ON i.id = p.instance_id
                  WHERE p.app_id = t.app_id AND \(unescaped: live)
                    AND i.last_seen > now() - make_interval(secs => \(staleSeconds)))
            ORDER BY t.user_id, t.vendor, t.token
            """)
        return try rows.compactMap(Self.decodeTarget)
    }

    /// A target row of either query (`user_id, vendor, token, environment, bundle_id, language, delivered`); nil for a
    /// vendor or environment this build does not know.
    private static func decodeTarget(_ row: PostgresRow) throws -> (PushTarget, delivered: Bool)? {
        guard let vendor = PushVendor(rawValue: try row.decode("vendor")),
            let environment = PushEnvironment(rawValue: try row.decode("environment"))
        else { return nil }
        let target = PushTarget(
            userId: try row.decode("user_id"), vendor: vendor, token: try row.decode("token"),
            environment: environment, bundleId: try row.decode("bundle_id"),
            language: PreviewLanguage(stored: try row.decode("language")))
        return (target, try row.decode("delivered", as: Bool.self))
    }

    /// What a call's pushes name the caller: their nickname, or their id when they have none.
    func callerName(appId: Int64, userId: String) async throws -> String {
        try await database.query(
            """
            SELECT coalesce(nullif(nickname, ''), id) AS name FROM users WHERE app_id = \(appId) AND id = \(userId)
            """
        ).first.map { try $0.decode("name") } ?? userId
    }

    /// Each user's total unread (the badge of their alerts): `parley_unread_total` (migrations 0012, 0024), one range of
    /// the user's conversation rows and two index lookups per conversation with unread messages.
    func unreadTotals(appId: Int64, userIds: [String]) async throws -> [String: Int64] {
        guard !userIds.isEmpty else { return [:] }
        let rows = try await database.query(
            """
            SELECT u.user_id, parley_unread_total(\(appId), u.user_id) AS unread
            FROM unnest(\(PostgresTextArray(userIds))::text[]) AS u(user_id)
            """)
        var totals: [String: Int64] = [:]
        for row in rows { totals[try row.decode("user_id")] = try row.decode("unread") }
        return totals
    }

    /// Records pushed tokens, so that a retry of the job skips them.
    func recordDeliveries(jobId: Int64, _ targets: [PushTarget]) async throws {
        guard !targets.isEmpty else { return }
        _ = try await database.query(
            """
            INSERT INTO push_deliveries (job_id, vendor, token)
            SELECT \(jobId), d.vendor, d.token
            FROM unnest(\(PostgresTextArray(targets.map(\.vendor.rawValue)))::text[],
                        \(PostgresTextArray(targets.map(\.token)))::text[]) AS d(vendor, token)
            ON CONFLICT DO NOTHING
            """)
    }

    /// The job is done (or given up, or pointless): it and its delivery records go.
    func complete(jobId: Int64) async throws {
        _ = try await database.query("DELETE FROM push_jobs WHERE id = \(jobId)")
    }

    /// Another attempt after `delay`, free for any worker then.
    func reschedule(jobId: Int64, after delay: Duration) async throws {
        let milliseconds = Int(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
        _ = try await database.query(
            """
            UPDATE push_jobs SET leased_until = NULL,
                next_attempt_at = now() + make_interval(secs => \(Double(milliseconds) / 1000))
            WHERE id = \(jobId)
            """)
    }
}

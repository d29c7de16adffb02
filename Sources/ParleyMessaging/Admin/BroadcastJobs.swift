import Foundation
import ParleyCrypto
import ParleyHTTP
import ParleyJSON
import ParleyMessageModel
import ParleyPostgres

/// Broadcasts to every user of an app, as jobs (`broadcast_jobs`, migrations/0025). Any instance's worker leases a
/// job and sends it chunk by chunk in user id order; each chunk and the job's cursor and counts commit in one
/// transaction, and each message's client id is `bc_<job>_<user>`, so a job taken over after a crash resumes where
/// the last commit left it and never sends a user a second message.
public struct BroadcastJobs: Sendable {
    let database: PostgresClient
    let admin: AdminMessageService
    /// Users per chunk (one statement each).
    let chunkSize: Int
    /// How long a worker holds a job between chunks before another instance may take it over.
    let lease: Duration
    /// This worker's name in `lease_owner`.
    let workerId: String

    init(database: PostgresClient, admin: AdminMessageService, chunkSize: Int = 500, lease: Duration = .seconds(60)) {
        self.database = database
        self.admin = admin
        self.chunkSize = chunkSize
        self.lease = lease
        workerId = SecureRandom.token(bytes: 9)
    }

    public struct Job: Sendable, Encodable {
        public var jobId: String
        public var state: String
        public var total: Int
        public var sent: Int
        public var failed: Int
        public var createdAt: Date
        public var finishedAt: Date?
    }

    static let columns = "id, state, total, sent, failed, created_at, finished_at"

    static func decode(_ row: PostgresRow) throws -> Job {
        Job(
            jobId: String(try row.decode("id", as: Int64.self)), state: try row.decode("state"),
            total: try row.decode("total"), sent: try row.decode("sent"), failed: try row.decode("failed"),
            createdAt: try row.decode("created_at"), finishedAt: try row.decode("finished_at"))
    }

    /// Queues a broadcast to every user of the app (not deleted) as of now; `total` counts them.
    public func create(_ request: AdminMessageService.BroadcastRequest, appId: Int64) async throws -> Job {
        let options = request.options ?? AdminMessageService.Options()
        guard options.onlineOnly != true else {
            throw APIError.validationFailed.with(message: "`options.onlineOnly` is for single sends only")
        }
        let prepared = try await admin.prepare(
            appId: appId, fromId: request.fromId, chatType: ChatType.single.rawValue, msgType: request.msgType,
            content: request.content, extra: request.extra)
        let rows = try await database.query(
            """
            INSERT INTO broadcast_jobs (app_id, from_id, system, msg_type, content, extra, push_options, uncounted, total)
            SELECT \(appId), \(prepared.sender), \(prepared.system), \(prepared.msgType.rawValue),
                   \(String(decoding: prepared.content, as: UTF8.self)),
                   \(prepared.extra.map { String(decoding: $0, as: UTF8.self) }), \(options.pushOptions)::jsonb,
                   \(options.noUnread == true),
                   (SELECT count(*) FROM users u
                    WHERE u.app_id = \(appId) AND u.deleted_at IS NULL AND u.id <> \(prepared.sender))
            RETURNING \(unescaped: Self.columns)
            """)
        return try Self.decode(rows[0])
    }

    public func job(_ rawID: String, appId: Int64) async throws -> Job {
        guard MessagingInput.isDecimal(rawID), let id = Int64(rawID) else { throw APIError.broadcastJobNotFound }
        guard
            let row = try await database.query(
                "SELECT \(unescaped: Self.columns) FROM broadcast_jobs WHERE app_id = \(appId) AND id = \(id)"
            ).first
        else { throw APIError.broadcastJobNotFound }
        return try Self.decode(row)
    }

    /// Takes one unfinished job whose lease is free and sends it to the end (at most `maxChunks` chunks: tests stop
    /// midway). Returns whether a job was worked on.
    @discardableResult
    func runOnce(maxChunks: Int = .max) async throws -> Bool {
        let leaseSeconds = Int(lease.components.seconds)
        guard
            let row = try await database.query(
                """
                UPDATE broadcast_jobs SET state = 'running', lease_owner = \(workerId),
                       leased_until = now() + \(leaseSeconds) * interval '1 second'
                WHERE id = (SELECT id FROM broadcast_jobs
                            WHERE state <> 'finished' AND (leased_until IS NULL OR leased_until < now())
                            ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
                RETURNING id, app_id, from_id, system, msg_type, content, extra, push_options::text AS push_options,
                          uncounted
                """
            ).first
        else { return false }
        let jobId = try row.decode("id", as: Int64.self)
        let appId = try row.decode("app_id", as: Int64.self)
        let msgType = MessageType(rawValue: try row.decode("msg_type", as: String.self)) ?? .custom
        let contentText = try row.decode("content", as: String.self)
        let extraText = try row.decode("extra", as: String?.self)
        let prepared = AdminMessageService.Prepared(
            sender: try row.decode("from_id"), system: try row.decode("system"), chatType: .single, msgType: msgType,
            content: Array(contentText.utf8), contentValue: try MessageRepository.parseStored(contentText),
            extra: extraText.map { Array($0.utf8) },
            extraValue: try extraText.map { text throws -> JSONValue in try MessageRepository.parseStored(text) })
        let options = AdminMessageService.Options(
            noPush: try row.decode("push_options", as: String?.self) != nil,
            noUnread: try row.decode("uncounted", as: Bool.self))
        for _ in 0..<maxChunks {
            let (more, published) = try await database.withTransaction { connection in
                try await sendChunk(jobId: jobId, appId: appId, prepared: prepared, options: options, on: connection)
            }
            admin.publishStored(published, appId: appId)
            if !more { break }
        }
        return true
    }

    /// One chunk and the job's progress in the caller's transaction; false once the job finished (or another
    /// worker holds it now).
    private func sendChunk(
        jobId: Int64, appId: Int64, prepared: AdminMessageService.Prepared, options: AdminMessageService.Options,
        on connection: PostgresConnection
    ) async throws -> (Bool, [MessagingEvent]) {
        let leaseSeconds = Int(lease.components.seconds)
        guard
            let job = try await connection.query(
                """
                SELECT cursor FROM broadcast_jobs
                WHERE id = \(jobId) AND lease_owner = \(workerId) AND state = 'running' FOR UPDATE
                """
            ).first
        else { return (false, []) }
        let cursor = try job.decode("cursor", as: String?.self) ?? ""
        let users = try await connection.query(
            """
            SELECT id FROM users
            WHERE app_id = \(appId) AND id > \(cursor) AND deleted_at IS NULL AND id <> \(prepared.sender)
            ORDER BY id LIMIT \(chunkSize)
            """
        ).map { try $0.decode("id", as: String.self) }
        guard let last = users.last else {
            _ = try await connection.query(
                """
                UPDATE broadcast_jobs SET state = 'finished', finished_at = now(), lease_owner = NULL,
                       leased_until = NULL
                WHERE id = \(jobId)
                """)
            return (false, [])
        }
        let (results, published) = try await admin.broadcast(
            prepared, to: users, clientMsgIds: users.map { "bc_\(jobId)_\($0)" }, options: options, appId: appId,
            query: { try await connection.query($0) })
        // A duplicate was sent by a chunk whose commit this job's counts never saw.
        let sent = results.count { $0.status == "sent" || $0.status == "duplicate" }
        _ = try await connection.query(
            """
            UPDATE broadcast_jobs SET cursor = \(last), sent = sent + \(sent), failed = failed + \(results.count - sent),
                   leased_until = now() + \(leaseSeconds) * interval '1 second'
            WHERE id = \(jobId)
            """)
        return (true, published)
    }
}

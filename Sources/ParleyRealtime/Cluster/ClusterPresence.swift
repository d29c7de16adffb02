import Foundation
import ParleyCrypto
import ParleyLifecycle
import ParleyNet
import ParleyObservability
import ParleyPostgres
import Synchronization

/// Who is connected where, in the database, for whoever must know whether a user is online anywhere (offline push
/// asks `realtime_presence` joined with live `realtime_instances`, migrations/0008).
///
/// Connects and disconnects only queue a change under a lock (the gateway never waits for the database); one task
/// writes the queued changes in one transaction per batch. The instance row is heartbeated every few seconds:
/// readers ignore the rows of instances silent for 15 s, so a crashed instance's users count as offline soon.
/// When the instance row has vanished (another instance pruned it after a long database outage), the next
/// heartbeat recreates it and rewrites every open connection.
final class ClusterPresence: Sendable {
    struct Row: Sendable, Hashable {
        var connectionId: UInt64
        var appId: Int64
        var userId: String
        var sessionId: String
        /// The connection said it is away (`presence_set`).
        var away = false
    }

    struct UserKey: Hashable, Sendable {
        var appId: Int64
        var userId: String
    }

    private struct Pending {
        var inserts: [UInt64: Row] = [:]
        var deletes: Set<UInt64> = []
        /// Away flags of connections already written.
        var away: [UInt64: Bool] = [:]
        /// Users whose last connection here closed: their last-seen time is written with the batch.
        var offline: Set<UserKey> = []
        var resync = true
    }

    let instanceId: String
    private let database: PostgresClient
    private let logger: Logger
    private let heartbeat: Duration
    /// Every open connection of this instance (for a resync).
    private let snapshot: @Sendable () -> [Row]
    private let pending = Mutex(Pending())
    /// Open connections that said they are away (a rewrite of every row must keep them away).
    private let awayConnections = Mutex<Set<UInt64>>([])
    /// A wake is scheduled for the away flags and last-seen times queued since the last write.
    private let wakeScheduled = Atomic<Bool>(false)
    /// How long away flags and last-seen times wait to share a write (nobody waits for them, unlike connects,
    /// which offline push reads).
    static let statusWriteDelay: Duration = .milliseconds(250)
    private let wake: AsyncStream<Void>.Continuation
    private let wakes: AsyncStream<Void>

    init(
        database: PostgresClient, logger: Logger, heartbeat: Duration = .seconds(5),
        snapshot: @escaping @Sendable () -> [Row]
    ) {
        instanceId = Hex.encode(SecureRandom.bytes(12))
        self.database = database
        self.logger = logger
        self.heartbeat = heartbeat
        self.snapshot = snapshot
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    // MARK: Gateway side (never blocks)

    func connected(_ row: Row) {
        pending.withLock { state in
            state.deletes.remove(row.connectionId)
            state.inserts[row.connectionId] = row
        }
        wake.yield()
    }

    func disconnected(connectionId: UInt64) {
        pending.withLock { state in
            // Connected and gone within one batch: nothing to write.
            if state.inserts.removeValue(forKey: connectionId) == nil { state.deletes.insert(connectionId) }
            state.away[connectionId] = nil
        }
        awayConnections.withLock { _ = $0.remove(connectionId) }
        wake.yield()
    }

    /// The connection's `presence_set`.
    func statusChanged(connectionId: UInt64, away: Bool) {
        awayConnections.withLock { set in
            if away { set.insert(connectionId) } else { set.remove(connectionId) }
        }
        pending.withLock { state in
            if state.inserts[connectionId] != nil {
                state.inserts[connectionId]!.away = away
            } else if !state.deletes.contains(connectionId) {
                state.away[connectionId] = away
            }
        }
        wakeSoon()
    }

    /// The user's last connection on this instance closed (`user_presence.last_seen`).
    func wentOffline(appId: Int64, userId: String) {
        pending.withLock { _ = $0.offline.insert(UserKey(appId: appId, userId: userId)) }
        wakeSoon()
    }

    private func wakeSoon() {
        guard wakeScheduled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
            return
        }
        Task { [self] in
            try? await Task.sleep(for: Self.statusWriteDelay)
            wakeScheduled.store(false, ordering: .relaxed)
            wake.yield()
        }
    }

    // MARK: Writer

    /// The heartbeat, every few seconds from the start, as a service of its own.
    var heartbeatService: PeriodicService<ContinuousClock> {
        PeriodicService("realtime presence heartbeat", every: heartbeat, firstAfter: .zero) { [self] in await beat() }
    }

    /// Heartbeat; also prunes instances silent for a minute (their presence rows go with them).
    func beat() async {
        do {
            let rows = try await database.query(
                """
                INSERT INTO realtime_instances (id) VALUES (\(instanceId))
                ON CONFLICT (id) DO UPDATE SET last_seen = now()
                RETURNING (xmax = 0) AS inserted
                """)
            if try rows.first?.decode("inserted", as: Bool.self) == true {
                pending.withLock { $0.resync = true }
                wake.yield()
            }
            _ = try await database.query(
                """
                DELETE FROM realtime_instances WHERE last_seen < now() - interval '60 seconds' AND id <> \(instanceId)
                """)
        } catch {
            logger.warning("presence heartbeat failed", ["error": .string(String(describing: error))])
        }
    }

    /// Writes the queued changes (or everything, after the instance row was recreated) in one transaction. On
    /// failure they stay queued for the next attempt.
    func flush() async {
        let (inserts, deletes, away, offline, resync) = pending.withLock { state in
            defer { state = Pending(resync: false) }
            return (
                Array(state.inserts.values), Array(state.deletes), state.away, Array(state.offline), state.resync
            )
        }
        // Taken after the queue was emptied: a connection closing from here on queues its delete again.
        let rows: [Row]
        if resync {
            let away = awayConnections.withLock { $0 }
            rows = snapshot().map { row in
                var row = row
                row.away = away.contains(row.connectionId)
                return row
            }
        } else {
            rows = inserts
        }
        guard resync || !rows.isEmpty || !deletes.isEmpty || !away.isEmpty || !offline.isEmpty else { return }
        do {
            let instanceId = instanceId
            try await database.withTransaction { connection in
                if resync {
                    _ = try await connection.query(
                        """
                        INSERT INTO realtime_instances (id) VALUES (\(instanceId))
                        ON CONFLICT (id) DO UPDATE SET last_seen = now()
                        """)
                    _ = try await connection.query("DELETE FROM realtime_presence WHERE instance_id = \(instanceId)")
                }
                if !deletes.isEmpty {
                    _ = try await connection.query(
                        """
                        DELETE FROM realtime_presence WHERE instance_id = \(instanceId)
                          AND connection_id = ANY(\(PostgresTextArray(deletes.map(String.init)))::bigint[])
                        """)
                }
                if !rows.isEmpty {
                    _ = try await connection.query(
                        """
                        INSERT INTO realtime_presence (instance_id, connection_id, app_id, user_id, session_id, away)
                        SELECT \(instanceId), r.id, r.app, r.usr, r.sess, r.away
                        FROM unnest(\(PostgresTextArray(rows.map { String($0.connectionId) }))::bigint[],
                                    \(PostgresTextArray(rows.map { String($0.appId) }))::bigint[],
                                    \(PostgresTextArray(rows.map(\.userId)))::text[],
                                    \(PostgresTextArray(rows.map(\.sessionId)))::text[],
                                    \(PostgresTextArray(rows.map { String($0.away) }))::boolean[])
                             AS r(id, app, usr, sess, away)
                        ON CONFLICT DO NOTHING
                        """)
                }
                if !away.isEmpty && !resync {
                    _ = try await connection.query(
                        """
                        UPDATE realtime_presence p SET away = r.away
                        FROM unnest(\(PostgresTextArray(away.keys.map(String.init)))::bigint[],
                                    \(PostgresTextArray(away.values.map { String($0) }))::boolean[]) AS r(id, away)
                        WHERE p.instance_id = \(instanceId) AND p.connection_id = r.id
                        """)
                }
                if !offline.isEmpty {
                    // Users deleted meanwhile have no row to attach to: skipped, so the batch still commits.
                    _ = try await connection.query(
                        """
                        INSERT INTO user_presence (app_id, user_id, last_seen)
                        SELECT r.app, r.usr, now()
                        FROM unnest(\(PostgresTextArray(offline.map { String($0.appId) }))::bigint[],
                                    \(PostgresTextArray(offline.map(\.userId)))::text[]) AS r(app, usr)
                        JOIN users u ON u.app_id = r.app AND u.id = r.usr
                        ON CONFLICT (app_id, user_id) DO UPDATE SET last_seen = excluded.last_seen
                        """)
                }
            }
        } catch {
            logger.warning("writing presence failed; will retry", ["error": .string(String(describing: error))])
            pending.withLock { state in
                if resync { state.resync = true }
                for row in inserts
                where !state.deletes.contains(row.connectionId) && state.inserts[row.connectionId] == nil {
                    state.inserts[row.connectionId] = row
                }
                for id in deletes where state.inserts.removeValue(forKey: id) == nil { state.deletes.insert(id) }
                for (id, isAway) in away where state.away[id] == nil && !state.deletes.contains(id) {
                    if state.inserts[id] != nil { state.inserts[id]!.away = isAway } else { state.away[id] = isAway }
                }
                state.offline.formUnion(offline)
            }
            try? await Task.sleep(for: .milliseconds(500))
            wake.yield()
        }
    }
}

extension ClusterPresence: Service {
    var name: String { "realtime presence" }

    /// Writes queued changes until cancelled (everything first: the instance's rows start from scratch), then
    /// removes this instance's rows: its connections are closing anyway.
    func run() async {
        wake.yield()
        for await _ in wakes {
            await flush()
        }
        wake.finish()
        await withCancellationShield { [self] in
            do {
                _ = try await database.query("DELETE FROM realtime_instances WHERE id = \(instanceId)")
            } catch {
                logger.warning(
                    "could not remove this instance's presence", ["error": .string(String(describing: error))])
            }
        }
    }
}

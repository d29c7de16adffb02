import Foundation
import ParleyPostgres

/// Presence as the database knows it: who is connected on which live instance and whether every connection there
/// is away (`realtime_presence`, written by `ClusterPresence`), when users were last seen and whether they show it
/// (`user_presence`, migrations/0035).
struct PresenceRepository: Sendable {
    let database: PostgresClient

    /// What a viewer may know of each of `userIds` they may see: the user themselves, active friends, and members
    /// of a conversation the viewer belongs to. Others (and unknown or deleted users) are left out. Statuses of
    /// `excludingInstance` are left out too (the caller knows its own better).
    func seeds(appId: Int64, viewer: String, userIds: [String], excludingInstance: String?) async throws
        -> [String: PresenceState.Seed]
    {
        let rows = try await database.query(
            """
            SELECT a.id AS user_id, ps.last_seen, coalesce(ps.show_last_seen, true) AS show_last_seen,
                   st.instance_id, st.online
            FROM (SELECT DISTINCT unnest(\(PostgresTextArray(userIds))::text[]) AS id) a
            LEFT JOIN user_presence ps ON ps.app_id = \(appId) AND ps.user_id = a.id
            LEFT JOIN LATERAL (
                SELECT p.instance_id, bool_or(NOT p.away) AS online
                FROM realtime_presence p
                JOIN realtime_instances i ON i.id = p.instance_id
                     AND i.last_seen > now() - make_interval(secs => \(OnlineState.staleSeconds))
                WHERE p.app_id = \(appId) AND p.user_id = a.id
                  AND p.instance_id IS DISTINCT FROM \(excludingInstance)
                GROUP BY p.instance_id
            ) st ON true
            WHERE EXISTS (SELECT 1 FROM users u WHERE u.app_id = \(appId) AND u.id = a.id AND u.deleted_at IS NULL)
              AND (a.id = \(viewer)
               OR EXISTS (SELECT 1 FROM friendships f
                          WHERE f.app_id = \(appId) AND f.user_id = \(viewer) AND f.friend_id = a.id AND f.active)
               OR EXISTS (SELECT 1 FROM conversation_members m
                          JOIN conversation_members o ON o.app_id = m.app_id AND o.user_id = a.id
                               AND o.conversation_id = m.conversation_id
                          WHERE m.app_id = \(appId) AND m.user_id = \(viewer)))
            """)
        var seeds: [String: PresenceState.Seed] = [:]
        for row in rows {
            let userId = try row.decode("user_id", as: String.self)
            var seed = seeds[userId] ?? PresenceState.Seed()
            seed.lastSeen = row.isNull("last_seen") ? nil : try row.decode("last_seen", as: Date.self)
            seed.hidesLastSeen = !(try row.decode("show_last_seen", as: Bool.self))
            if !row.isNull("instance_id") {
                seed.instances[try row.decode("instance_id", as: String.self)] =
                    try row.decode("online", as: Bool.self) ? .online : .away
            }
            seeds[userId] = seed
        }
        return seeds
    }

    /// Ids of the instances heard from recently (the others' statuses no longer count).
    func liveInstances() async throws -> Set<String> {
        let rows = try await database.query(
            """
            SELECT id FROM realtime_instances
            WHERE last_seen > now() - make_interval(secs => \(OnlineState.staleSeconds))
            """)
        return Set(try rows.map { try $0.decode("id", as: String.self) })
    }

    func showsLastSeen(appId: Int64, userId: String) async throws -> Bool {
        let rows = try await database.query(
            "SELECT show_last_seen FROM user_presence WHERE app_id = \(appId) AND user_id = \(userId)")
        return try rows.first?.decode("show_last_seen", as: Bool.self) ?? true
    }

    func setShowsLastSeen(_ shows: Bool, appId: Int64, userId: String) async throws {
        _ = try await database.query(
            """
            INSERT INTO user_presence (app_id, user_id, show_last_seen) VALUES (\(appId), \(userId), \(shows))
            ON CONFLICT (app_id, user_id) DO UPDATE SET show_last_seen = excluded.show_last_seen
            """)
    }
}

import ParleyAuth
import ParleyJSON
import ParleyPostgres

/// Who is online across every instance, read from the presence the gateways write (`realtime_presence`, rows of
/// instances heard from within `staleSeconds` only: a crashed instance's users are offline soon), always within one
/// app.
struct OnlineState: Sendable {
    let database: PostgresClient
    /// As offline push counts them: an instance silent this long has crashed.
    static let staleSeconds = 15

    struct UserState: Sendable, Encodable {
        var userId: String
        var online: Bool
        /// The platforms of its open sockets (`ios`, `android`, `web`, ...), sorted.
        var platforms: [String]
        /// Signed-in devices (sessions) with at least one open socket.
        var devices: Int
        var connections: Int
    }

    /// The state of each of `userIds` (each once, in the order asked); users of other apps and unknown ids are
    /// offline.
    func users(appId: Int64, userIds: [String]) async throws -> [UserState] {
        let rows = try await database.query(
            """
            SELECT p.user_id, s.platform, count(DISTINCT p.session_id)::bigint AS devices,
                   count(*)::bigint AS connections
            FROM realtime_presence p
            JOIN realtime_instances i ON i.id = p.instance_id
                 AND i.last_seen > now() - make_interval(secs => \(Self.staleSeconds))
            JOIN sessions s ON s.id = p.session_id
            WHERE p.app_id = \(appId) AND p.user_id = ANY(\(PostgresTextArray(userIds))::text[])
            GROUP BY p.user_id, s.platform
            """)
        var byUser: [String: UserState] = [:]
        for row in rows {
            let userId = try row.decode("user_id", as: String.self)
            var state =
                byUser[userId] ?? UserState(userId: userId, online: true, platforms: [], devices: 0, connections: 0)
            state.platforms.append(try row.decode("platform"))
            state.devices += Int(try row.decode("devices", as: Int64.self))
            state.connections += Int(try row.decode("connections", as: Int64.self))
            byUser[userId] = state
        }
        return userIds.map { id in
            guard var state = byUser[id] else {
                return UserState(userId: id, online: false, platforms: [], devices: 0, connections: 0)
            }
            state.platforms.sort()
            return state
        }
    }

    /// `online` of `GET /api/admin/stats`: users and connections online now in the app (the app's presence rows,
    /// one per open socket: what is online, not a scan of users).
    var statisticsContributor: StatisticsContributor {
        let database = database
        return StatisticsContributor("online") { appId in
            let row = try await database.query(
                """
                SELECT count(DISTINCT p.user_id)::bigint AS users, count(*)::bigint AS connections
                FROM realtime_presence p
                JOIN realtime_instances i ON i.id = p.instance_id
                     AND i.last_seen > now() - make_interval(secs => \(Self.staleSeconds))
                WHERE p.app_id = \(appId)
                """)[0]
            return .object([
                "users": .number(JSONNumber(try row.decode("users", as: Int64.self))),
                "connections": .number(JSONNumber(try row.decode("connections", as: Int64.self))),
            ])
        }
    }
}

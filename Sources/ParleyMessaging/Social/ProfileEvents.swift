import ParleyAuth
import ParleyJSON
import ParleyPostgres

/// The `profile` event: a user's new public profile goes to everyone who shows it (active friends, the peers of
/// their 1:1 conversations) and to the user's own other devices, recorded in the transaction that changed it and
/// published after its commit. Auth runs it through `ProfileChangeRecorder` (ParleyApp wires it).
public struct ProfileEvents: Sendable {
    let userEvents: UserEvents

    /// Records the event for the audience as of this transaction and returns the publication to run after the
    /// commit.
    public func record(
        _ profile: PublicProfile, appId: Int64, origin: String?, on connection: PostgresConnection
    ) async throws -> @Sendable () -> Void {
        let rows = try await connection.query(
            """
            SELECT f.friend_id AS user_id FROM friendships f
            WHERE f.app_id = \(appId) AND f.user_id = \(profile.id) AND f.active
            UNION
            SELECT m.peer_id FROM conversation_members m
            WHERE m.app_id = \(appId) AND m.user_id = \(profile.id) AND m.peer_id IS NOT NULL
            """)
        var recipients = [profile.id]
        for row in rows { recipients.append(try row.decode("user_id")) }
        let event = UserEvent(
            kind: .profile, data: try JSONValue.parse(JSONCoding.bytesEncoder.encode(profile)),
            recipients: recipients)
        try await userEvents.record([event], appId: appId, on: connection)
        let userEvents = userEvents
        return { userEvents.publish([event], appId: appId, origin: origin) }
    }

    /// `record` as the closure auth calls.
    public var recorder: ProfileChangeRecorder {
        { [self] appId, profile, origin, connection in
            try await record(profile, appId: appId, origin: origin, on: connection)
        }
    }
}

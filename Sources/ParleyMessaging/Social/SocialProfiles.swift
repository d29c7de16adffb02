import ParleyAuth
import ParleyPostgres

/// The public profile columns of `users` as the social routes join them (alias `u`, columns prefixed `u_`).
enum SocialProfiles {
    static let columns =
        "u.id AS u_id, u.nickname AS u_nickname, u.avatar AS u_avatar, u.deleted_at IS NOT NULL AS u_deleted"

    static func decode(_ row: PostgresRow) throws -> PublicProfile {
        PublicProfile(
            id: try row.decode("u_id"), nickname: try row.decode("u_nickname"), avatar: try row.decode("u_avatar"))
    }
}

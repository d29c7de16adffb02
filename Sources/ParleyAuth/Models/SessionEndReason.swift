/// Why a session ended; stored in `sessions.end_reason` and published on `SessionEvents`.
public enum SessionEndReason: String, Sendable, Hashable, Codable {
    case logout
    /// Ended from another device with `DELETE /api/auth/sessions/{id}`.
    case revoked
    /// Displaced by a login on another device under the app's session policy.
    case accountConflict = "account_conflict"
    /// Displaced by a new login from the same device (same device id): no conflict notice is due.
    case relogin
    /// A refresh token was presented twice: the session is presumed stolen.
    case tokenReuse = "token_reuse"
    /// The account was banned (its data stays; logins answer 1043 until the ban is lifted).
    case banned
    /// The account was deleted (`DELETE /api/users/me`, or the app's backend): logins answer 1048.
    case deleted
    /// Ended by the app's backend (`POST /api/admin/users/{userId}/logout`): the user may log in again.
    case forcedLogout = "forced_logout"
}

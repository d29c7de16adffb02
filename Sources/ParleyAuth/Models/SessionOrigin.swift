/// How a session was opened (`sessions.origin`).
public enum SessionOrigin: String, Sendable, Hashable {
    /// Register or login with a password: a new login displaces per the app's session policy.
    case password
    /// A signed login from the app's backend (`POST /api/im/auth/login`): a new one for the same device renews the
    /// session, so the app's silent renewal never knocks its own socket off.
    case signed
}

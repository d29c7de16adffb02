import Foundation

/// One app (tenant) as the server keeps it in memory: settings read on every authenticated request, and the
/// secret, still encrypted, for verifying signed server-to-server calls.
public struct AppSettings: Sendable, Hashable {
    public var id: Int64
    public var appKey: String
    public var name: String
    public var privacyVersion: Int
    public var sessionPolicy: SessionPolicy
    /// Per-app overrides of the server-wide token lifetimes (seconds); nil = the default.
    public var accessTokenTTL: Int?
    public var refreshTokenTTL: Int?
    public var imTokenTTL: Int?
    /// The app's own revoke window for messages (seconds); nil = the server default.
    public var revokeWindowSeconds: Int?
    /// Who may chat 1:1 (the send functions read it from the table, migrations/0019).
    public var directMessages: DirectMessagePolicy = .anyone
    public var secretCiphertext: [UInt8]
    public var previousSecretCiphertext: [UInt8]?
    public var previousSecretExpiresAt: Date?
    public var createdAt: Date
    public var updatedAt: Date
}

/// Who may start (and keep) a 1:1 chat in an app.
public enum DirectMessagePolicy: String, Sendable, Hashable, CaseIterable {
    /// Any two users of the app (the default).
    case anyone
    /// Only friends: every 1:1 send between non-friends is refused (1120), also in conversations from before.
    case friends
}

import ParleyCrypto

/// Random identifiers and secrets. The prefixes make a leaked string recognisable (secret scanners, logs) and
/// stop one kind being passed where another is expected.
public enum Identifiers {
    /// `u_` + 120 random bits (20 base64url characters): built-in accounts.
    public static func newUserID() -> String { "u_" + SecureRandom.token(bytes: 15) }
    /// `s_` + 128 random bits.
    public static func newSessionID() -> String { "s_" + SecureRandom.token(bytes: 16) }
    /// `ak_` + 128 random bits: public, names the app.
    public static func newAppKey() -> String { "ak_" + SecureRandom.token(bytes: 16) }
    /// `as_` + 256 random bits: the app's signing secret.
    public static func newAppSecret() -> String { "as_" + SecureRandom.token(bytes: 32) }
    /// `rt_` + 256 random bits: an opaque refresh token.
    public static func newRefreshToken() -> String { "rt_" + SecureRandom.token(bytes: 32) }
}

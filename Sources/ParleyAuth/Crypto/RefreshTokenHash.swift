import ParleyCrypto

/// Refresh tokens are stored only as SHA-256: 256 random bits need no salt or slow hash, and a database
/// leak then yields nothing usable.
enum RefreshTokenHash {
    static func of(_ token: String) -> [UInt8] { SHA256.hash(Array(token.utf8)) }

    /// Cheap shape check before touching the database.
    static func isWellFormed(_ token: String) -> Bool {
        token.hasPrefix("rt_") && token.utf8.count == 46
    }
}

import Foundation
import ParleyCrypto

/// The server master key (`PARLEY_MASTER_KEY`): 32 bytes, given as 64 hex digits or base64 / base64url. It
/// encrypts app secrets at rest and, when `PARLEY_TOKEN_KEYS` is unset, derives the token signing key.
public struct MasterKey: Sendable {
    public let bytes: [UInt8]

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(bytes: [UInt8]) throws(Invalid) {
        guard bytes.count == AESGCM.keyByteCount else {
            throw Invalid(description: "the master key must be 32 bytes, got \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// Parses 64 hex digits, or base64 / base64url of 32 bytes. The error never quotes the value.
    public init(parsing text: String) throws(Invalid) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.utf8.count == 64, let bytes = Hex.decode(trimmed) {
            try self.init(bytes: bytes)
        } else if let bytes = Base64.decode(trimmed) ?? Base64URL.decode(trimmed), bytes.count == 32 {
            try self.init(bytes: bytes)
        } else {
            throw Invalid(
                description: "PARLEY_MASTER_KEY must be 32 random bytes as 64 hex digits or base64 "
                    + "(generate one with `openssl rand -hex 32`)")
        }
    }

    /// A fresh random key, hex-encoded (what `scripts/run` stores in `.parley/master.key`).
    public static func generateHex() -> String { Hex.encode(SecureRandom.bytes(32)) }

    /// HMAC(master, label): keys for other purposes, independent of the encryption use of the master key.
    func derive(_ label: String) -> [UInt8] { HMAC.sha256(key: bytes, message: Array(label.utf8)) }
}

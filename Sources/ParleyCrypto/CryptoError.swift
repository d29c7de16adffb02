/// Errors thrown by ParleyCrypto's primitives.
///
/// The cases are deliberately coarse: callers react to "the ciphertext is not authentic"
/// or "the parameters are wrong", never to which OpenSSL call failed.
public enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A key had the wrong length for the algorithm (AES-256-GCM needs exactly 32 bytes).
    case invalidKeyLength(expected: Int, actual: Int)
    /// Sealed data was truncated, tampered with, or sealed under a different key or associated data.
    case authenticationFailed
    /// Key-derivation parameters were outside the accepted limits.
    case invalidParameters(String)
    /// OpenSSL failed to derive a key (usually an allocation failure).
    case keyDerivationFailed
    /// OpenSSL failed while encrypting (usually an allocation failure).
    case encryptionFailed
    /// A key (PEM) could not be read, or is not of the expected kind.
    case invalidKeyFormat(String)
    /// OpenSSL failed to generate a key.
    case keyGenerationFailed
    /// OpenSSL failed to sign.
    case signingFailed

    public var description: String {
        switch self {
        case let .invalidKeyLength(expected, actual):
            return "invalid key length: expected \(expected) bytes, got \(actual)"
        case .authenticationFailed:
            return "authentication failed"
        case let .invalidParameters(reason):
            return "invalid parameters: \(reason)"
        case .keyDerivationFailed:
            return "key derivation failed"
        case .encryptionFailed:
            return "encryption failed"
        case let .invalidKeyFormat(reason):
            return "invalid key: \(reason)"
        case .keyGenerationFailed:
            return "key generation failed"
        case .signingFailed:
            return "signing failed"
        }
    }
}

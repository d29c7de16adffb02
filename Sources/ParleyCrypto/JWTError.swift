/// Why a JWT was refused or could not be made.
public enum JWTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not three base64url parts, bad JSON, an unsupported `crit` header, or claims that do not
    /// decode as the requested type.
    case malformed
    /// The header's `alg` is missing or anything but exactly `HS256` (`none`, `HS512`, ...).
    case unsupportedAlgorithm
    /// The header has no `kid`, or `keys` does not know it.
    case unknownKey
    /// The key is shorter than the 32 bytes HS256 requires (RFC 7518 section 3.2).
    case invalidKey
    /// The signature does not match.
    case badSignature
    /// The claims or header could not be encoded as JSON.
    case encodingFailed

    public var description: String {
        switch self {
        case .malformed: return "malformed token"
        case .unsupportedAlgorithm: return "unsupported algorithm"
        case .unknownKey: return "unknown key"
        case .invalidKey: return "key shorter than 256 bits"
        case .badSignature: return "bad signature"
        case .encodingFailed: return "could not encode token"
        }
    }
}

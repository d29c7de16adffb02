/// Why a `multipart/form-data` body was rejected. The kind picks the answer (`malformed` -> 400,
/// `headerTooLarge` -> 431, `tooManyParts` -> 413); the reason is stable for a given input, safe to log and
/// not meant for clients to parse.
public struct MultipartError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The body breaks RFC 2046 / RFC 7578 framing or header rules.
        case malformed
        /// A part's header section is larger than ``MultipartLimits/maxHeaderBytes``.
        case headerTooLarge
        /// The body has more parts than ``MultipartLimits/maxParts``.
        case tooManyParts
    }

    public var kind: Kind
    public var reason: String

    public init(kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { reason }

    public static let headerTooLarge = MultipartError(kind: .headerTooLarge, reason: "part header section too large")
    public static let tooManyParts = MultipartError(kind: .tooManyParts, reason: "too many parts")
    /// The input ended before the close delimiter (`--boundary--`): the upload was cut short.
    public static let unexpectedEnd = MultipartError(kind: .malformed, reason: "input ended before the close delimiter")

    public static func malformed(_ reason: String) -> MultipartError {
        MultipartError(kind: .malformed, reason: reason)
    }
}

/// Limits enforced by ``MultipartParser`` while it reads, so that a hostile body cannot make it buffer.
/// (Body sizes are the caller's business: part bodies are streamed, never held.)
public struct MultipartLimits: Sendable, Hashable {
    /// Largest header section of one part, counting every header line with its CRLF and the final empty line.
    public var maxHeaderBytes: Int
    /// Most parts one body may carry.
    public var maxParts: Int

    public init(maxHeaderBytes: Int = 8 * 1024, maxParts: Int = 16) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxParts = maxParts
    }
}

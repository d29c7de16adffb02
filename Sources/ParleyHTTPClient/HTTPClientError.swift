/// Why a request got no response. An HTTP error status (404, 500, ...) is not one of these: it is a response.
/// The strings are libcurl's own messages (its error buffer), for logs.
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request cannot be sent as given: a malformed URL or header field, an unsupported scheme.
    case invalidRequest(String)
    /// The request's file body could not be opened or read, or was shorter than promised.
    case bodyUnreadable(String)
    /// Name resolution or the TCP connection failed (refused, unreachable).
    case connectFailed(String)
    /// The exchange did not finish within the request's timeout.
    case timedOut(String)
    /// The TLS handshake failed or the peer's certificate was refused.
    case tls(String)
    /// The response body is larger than the client's `maxResponseBytes`.
    case responseTooLarge(limit: Int)
    /// Any other failure while sending or receiving (connection reset, HTTP/2 stream error, ...), with curl's code.
    case transport(code: Int, message: String)
    /// The calling task was cancelled before the response arrived.
    case cancelled
    /// The client was shut down before the response arrived.
    case shutdown

    public var description: String {
        switch self {
        case .invalidRequest(let message): "invalid request: \(message)"
        case .bodyUnreadable(let message): "request body unreadable: \(message)"
        case .connectFailed(let message): "connect failed: \(message)"
        case .timedOut(let message): "timed out: \(message)"
        case .tls(let message): "TLS failed: \(message)"
        case .responseTooLarge(let limit): "response body larger than \(limit) bytes"
        case .transport(let code, let message): "transport error (curl \(code)): \(message)"
        case .cancelled: "cancelled"
        case .shutdown: "HTTP client shut down"
        }
    }
}

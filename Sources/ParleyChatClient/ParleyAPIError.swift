/// Why a REST call (or a WebSocket request) failed.
public enum ParleyAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with an error envelope `{"code": c, "message": m, "data": null}` (codes in openapi.yaml),
    /// or a WebSocket request with an `error` frame (status 0).
    case server(status: Int, code: Int, message: String)
    /// No answer: connection refused, timeout, the WebSocket went away before the `ack`.
    case transport(String)
    /// An answer that is not what openapi.yaml / docs/protocol.md describe.
    case malformedAnswer(String)

    /// The envelope's code, when the server answered.
    public var code: Int? {
        if case .server(_, let code, _) = self { return code }
        return nil
    }

    public var description: String {
        switch self {
        case .server(let status, let code, let message):
            // Status 0: an `error` frame on the WebSocket, which has no HTTP status.
            status == 0 ? "\(message) (code \(code))" : "\(message) (code \(code), HTTP \(status))"
        case .transport(let message): message
        case .malformedAnswer(let message): "unexpected answer: \(message)"
        }
    }
}

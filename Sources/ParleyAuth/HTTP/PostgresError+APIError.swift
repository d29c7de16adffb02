import ParleyHTTP
import ParleyPostgres

// Every module that serves routes links ParleyAuth (routes need its authenticator, the gateway its tokens), so this
// conformance is present wherever `APIError.mapping` runs; ParleyHTTP and ParleyPostgres do not know each other.
extension PostgresError: APIErrorConvertible {
    /// An unreachable, timed-out or closed database is 1504/503 (retry shortly); anything else is a bug: 1500/500.
    public var apiError: APIError {
        switch kind {
        case .unavailable, .timeout, .closed: return .databaseUnavailable
        default: return .internalError
        }
    }
}

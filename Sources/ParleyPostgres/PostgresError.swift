/// Every failure of the PostgreSQL layer.
///
/// `description` is deliberately terse: it never contains bind values, the server's `detail`
/// (which echoes row contents, e.g. `Key (email)=(…) already exists`), nor the message of errors
/// that quote the offending input (SQLSTATE classes 22 and P0). Read `message` and `detail`
/// explicitly when you know they are safe to show.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// Cannot connect, or the connection was lost: callers answer 503.
        case unavailable
        /// No connection became free within `acquireTimeout`: callers answer 503.
        case timeout
        /// The server rejected the statement (see `sqlState`).
        case server
        /// A column could not be decoded as the requested Swift type.
        case decoding
        /// The client was shut down, or a leased connection was used after its lease ended.
        case closed
    }

    public var kind: Kind
    /// The five-character SQLSTATE code, when the server sent one.
    public var sqlState: String?
    public var message: String
    public var detail: String?
    /// The constraint that was violated (unique, foreign key, check), when the server names one.
    public var constraint: String?
    /// The table the error is about, when the server names one.
    public var table: String?

    /// True when the statement certainly did not run (it could not be sent, its connection closed while it was
    /// queued, or the backend was leaving before it read it). A pooled query is then retried elsewhere.
    var safeToRetry = false

    public init(
        kind: Kind, message: String, sqlState: String? = nil, detail: String? = nil,
        constraint: String? = nil, table: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.constraint = constraint
        self.table = table
    }

    /// `23505`: a unique or primary-key constraint was violated; `constraint` names it.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// `40001` (serialization failure) or `40P01` (deadlock): retrying the whole transaction may succeed.
    public var isSerializationFailure: Bool { sqlState == "40001" || sqlState == "40P01" }
    /// `23503`: a foreign-key constraint was violated.
    public var isForeignKeyViolation: Bool { sqlState == "23503" }

    public var description: String {
        var text = "PostgresError.\(kind)"
        if let sqlState { text += " [\(sqlState)]" }
        if let constraint { text += " constraint=\(constraint)" }
        text += ": "
        if let sqlState, sqlState.hasPrefix("22") || sqlState.hasPrefix("P0") {
            // Data exceptions quote the rejected input ("invalid input syntax for type integer: \"…\"").
            text += "message withheld (it may quote bound values)"
        } else {
            text += message
        }
        return text
    }

    static func closed(_ message: String = "the PostgreSQL client is shut down") -> PostgresError {
        PostgresError(kind: .closed, message: message)
    }

    static func decoding(_ message: String) -> PostgresError {
        PostgresError(kind: .decoding, message: message)
    }
}

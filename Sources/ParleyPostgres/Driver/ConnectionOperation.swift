import CLibPQ

typealias QueryResult = Result<PostgresRows, PostgresError>
typealias QueryContinuation = UnsafeContinuation<QueryResult, Never>

/// A query sent through `PostgresClient.query`: it owns no connection, so when it finishes the connection
/// goes back to the pool, and when the connection died before the statement ran it can be retried.
struct PooledQuery: Sendable {
    var query: PostgresQuery
    let continuation: QueryContinuation
    var attempt: Int
}

/// One unit of work queued on a connection.
struct ConnectionOperation {
    enum Command: Sendable {
        /// Extended protocol through the statement cache (one statement, `$n` binds).
        case extended(PostgresQuery)
        /// Simple-query protocol: several statements allowed, no binds.
        case simple(String)
    }

    enum Completion {
        /// A leased connection's caller waits for the result.
        case resume(QueryContinuation)
        /// The pool finishes it (releases the connection, maybe retries).
        case pooled(PooledQuery)
        /// Internal work: ROLLBACK on release, LISTEN, ...
        case callback((QueryResult) -> Void)
    }

    var command: Command
    var completion: Completion
}

/// Told about the life of a connection; called on the connection's loop.
protocol ConnectionDelegate: AnyObject {
    func connectionEstablished(_ connection: ConnectionDriver)
    func connection(_ connection: ConnectionDriver, failedToConnect error: PostgresError)
    /// An established connection closed, for any reason (lost, or closed by its owner). Called once,
    /// before the failures of its pending operations are delivered.
    func connection(_ connection: ConnectionDriver, closedWith error: PostgresError)
    func connection(_ connection: ConnectionDriver, finished query: PooledQuery, with result: QueryResult)
}

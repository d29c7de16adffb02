import CLibPQ
import ParleyNet

/// A connection leased from the pool for the duration of `PostgresClient.withConnection` or
/// `withTransaction`. Statements run one after another in the order they are issued.
///
/// The handle may be used from any task: it hops to the connection's event loop when needed. It is only
/// valid inside the closure it was passed to; afterwards every call fails with `.closed`.
public final class PostgresConnection: @unchecked Sendable {
    // `driver` and `released` are touched only on the pool's loop thread.
    let driver: ConnectionDriver
    let pool: LoopPool
    private var released = false

    init(driver: ConnectionDriver, pool: LoopPool) {
        self.driver = driver
        self.pool = pool
    }

    /// Runs one statement (extended protocol, prepared and cached per connection).
    public func query(_ query: PostgresQuery) async throws(PostgresError) -> PostgresRows {
        try await run(.extended(query)).get()
    }

    /// Runs SQL text through the simple-query protocol: several `;`-separated statements are allowed, no
    /// binds, nothing is prepared. Used by migrations. Nothing is escaped: never pass user input.
    public func execute(unsafeSQL sql: String) async throws(PostgresError) {
        _ = try await run(.simple(sql)).get()
    }

    /// The server process id of this connection (`pg_backend_pid()`).
    public var backendPID: Int {
        get async {
            let result: Int = await withUnsafeContinuation { continuation in
                pool.onLoop { continuation.resume(returning: Int(self.driver.backendPID)) }
            }
            return result
        }
    }

    /// Statements this connection has prepared on the server (for tests of the statement cache).
    var preparedStatementCount: Int {
        get async {
            await withUnsafeContinuation { continuation in
                pool.onLoop { continuation.resume(returning: self.driver.preparedCount) }
            }
        }
    }

    private func run(_ command: ConnectionOperation.Command) async -> QueryResult {
        await withUnsafeContinuation { (continuation: QueryContinuation) in
            pool.onLoop { self.submit(command, continuation) }
        }
    }

    private func submit(_ command: ConnectionOperation.Command, _ continuation: QueryContinuation) {
        guard !released else {
            continuation.resume(returning: .failure(.closed("the connection was used after its lease ended")))
            return
        }
        driver.enqueue(ConnectionOperation(command: command, completion: .resume(continuation)))
    }

    /// Ends the lease and returns once the pool has the connection back (after the rollback it may need) or has
    /// closed it, so whatever runs next (a lease, the pool's statistics) sees it returned.
    func release() async {
        if pool.loop.inEventLoop, !released, pool.canTakeBackAtOnce(driver) {
            released = true
            pool.release(driver)
            return
        }
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            pool.onLoop {
                guard !self.released else { return continuation.resume() }
                self.released = true
                self.pool.release(self.driver) { continuation.resume() }
            }
        }
    }
}

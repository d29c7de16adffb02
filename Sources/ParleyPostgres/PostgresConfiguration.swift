/// How `PostgresClient` reaches the database and sizes its pool.
public struct PostgresConfiguration: Sendable {
    /// A libpq connection string: a URI (`postgresql://user@host:5432/db?sslmode=disable`) or `key=value` pairs.
    /// Never logged: it may carry a password.
    public var conninfo: String
    /// Connections in total, split evenly across the event loops (at least one per loop).
    public var poolSize: Int = 16
    /// How long a query waits for a free connection before failing with `.timeout`.
    public var acquireTimeout: Duration = .seconds(5)
    /// How long establishing one connection (TCP, TLS, authentication) may take.
    public var connectTimeout: Duration = .seconds(5)
    /// Prepared statements kept per connection (least recently used are deallocated); 0 disables preparing.
    public var statementCacheCapacity: Int = 256
    /// How often a `sessionLock` another session holds is tried again: how long its work may go undone after the
    /// holder is gone.
    public var sessionLockRetryInterval: Duration = .seconds(2)

    public init(
        conninfo: String, poolSize: Int = 16, acquireTimeout: Duration = .seconds(5),
        connectTimeout: Duration = .seconds(5), statementCacheCapacity: Int = 256
    ) {
        self.conninfo = conninfo
        self.poolSize = poolSize
        self.acquireTimeout = acquireTimeout
        self.connectTimeout = connectTimeout
        self.statementCacheCapacity = statementCacheCapacity
    }

    /// Connections for the loop at `index` when `poolSize` is split across `loopCount` loops.
    func connectionsPerLoop(index: Int, loopCount: Int) -> Int {
        let base = poolSize / loopCount
        let extra = index < poolSize % loopCount ? 1 : 0
        return max(1, base + extra)
    }
}

extension PostgresConfiguration: CustomStringConvertible, CustomDebugStringConvertible {
    /// Everything but the connection string, which may hold a password.
    public var description: String {
        "PostgresConfiguration(conninfo: <redacted>, poolSize: \(poolSize), acquireTimeout: \(acquireTimeout), "
            + "connectTimeout: \(connectTimeout), statementCacheCapacity: \(statementCacheCapacity))"
    }

    public var debugDescription: String { description }
}

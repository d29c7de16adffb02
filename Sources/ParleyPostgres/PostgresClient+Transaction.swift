import Glibc

/// Transaction isolation levels (PostgreSQL has no READ UNCOMMITTED in practice).
public enum PostgresIsolation: Sendable, Hashable {
    case readCommitted, repeatableRead, serializable

    var beginStatement: PostgresQuery {
        switch self {
        case .readCommitted: "BEGIN ISOLATION LEVEL READ COMMITTED"
        case .repeatableRead: "BEGIN ISOLATION LEVEL REPEATABLE READ"
        case .serializable: "BEGIN ISOLATION LEVEL SERIALIZABLE"
        }
    }
}

extension PostgresClient {
    /// Runs `body` inside BEGIN … COMMIT on one leased connection. A throw rolls back and rethrows. A
    /// serialization failure or deadlock (40001 / 40P01, from any statement or from COMMIT) rolls back
    /// and runs the whole closure again after a short jittered backoff, up to `maxAttempts` times, so
    /// `body` must not have effects outside the database.
    public func withTransaction<T: Sendable>(
        isolation: PostgresIsolation = .readCommitted, maxAttempts: Int = 5,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withConnection { connection in
            var attempt = 1
            while true {
                do {
                    return try await Self.runTransaction(on: connection, isolation: isolation, body)
                } catch let error as PostgresError where error.isSerializationFailure && attempt < max(1, maxAttempts) {
                    logger.debug(
                        "retrying a transaction after a serialization failure",
                        ["attempt": .int(attempt), "sqlstate": .string(error.sqlState ?? "")])
                    try await Task.sleep(for: Self.backoff(attempt: attempt))
                    attempt += 1
                }
            }
        }
    }

    /// Runs `body` (statements that are each a transaction of their own, e.g. one call of a function that does the
    /// whole job) again when PostgreSQL aborts it with a serialization failure or deadlock (40001 / 40P01): racing
    /// first messages of a new conversation can deadlock on its rows, and the loser only needs to run again.
    public func retryingSerializationFailures<T: Sendable>(
        maxAttempts: Int = 5,
        _ body: () async throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch let error as PostgresError where error.isSerializationFailure && attempt < max(1, maxAttempts) {
                logger.debug(
                    "retrying after a serialization failure",
                    ["attempt": .int(attempt), "sqlstate": .string(error.sqlState ?? "")])
                try await Task.sleep(for: Self.backoff(attempt: attempt))
                attempt += 1
            }
        }
    }

    private static func runTransaction<T>(
        on connection: PostgresConnection, isolation: PostgresIsolation,
        _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        _ = try await connection.query(isolation.beginStatement)
        let value: T
        do {
            value = try await body(connection)
        } catch {
            _ = try? await connection.query("ROLLBACK")
            throw error
        }
        let commit: PostgresRows
        do {
            commit = try await connection.query("COMMIT")
        } catch {
            // A failed COMMIT has ended the transaction; make sure nothing is left open either way.
            _ = try? await connection.query("ROLLBACK")
            throw error
        }
        if commit.commandTag == "ROLLBACK" {
            // COMMIT of a transaction in which a statement failed (and `body` swallowed the error) rolls back.
            throw PostgresError(
                kind: .server, message: "the transaction was rolled back because a statement in it failed",
                sqlState: "25P02")
        }
        return value
    }

    /// 5 ms, 10 ms, 20 ms … (at most 200 ms), each plus up to as much again of random jitter.
    static func backoff(attempt: Int) -> Duration {
        let base = min(200, 5 << min(attempt - 1, 6))
        return .milliseconds(base + Int.random(in: 0...base))
    }
}

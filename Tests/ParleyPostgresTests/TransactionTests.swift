import Synchronization
import Testing

@testable import ParleyPostgres

@Suite struct TransactionTests {
    struct Boom: Error {}

    @Test func commitsWhenTheBodyReturns() async throws {
        try await withTestClient { client, _ in
            _ = try await client.query("CREATE TABLE t (n int)")
            let value = try await client.withTransaction { connection in
                _ = try await connection.query("INSERT INTO t VALUES (\(Int32(1)))")
                _ = try await connection.query("INSERT INTO t VALUES (\(Int32(2)))")
                return 42
            }
            #expect(value == 42)
            let rows = try await client.query("SELECT count(*) FROM t")
            #expect(try rows.first?.decode(0, as: Int.self) == 2)
        }
    }

    @Test func rollsBackWhenTheBodyThrows() async throws {
        try await withTestClient(poolSize: 2) { client, _ in
            _ = try await client.query("CREATE TABLE t (n int)")
            await #expect(throws: Boom.self) {
                try await client.withTransaction { connection in
                    _ = try await connection.query("INSERT INTO t VALUES (1)")
                    throw Boom()
                }
            }
            let rows = try await client.query("SELECT count(*) FROM t")
            #expect(try rows.first?.decode(0, as: Int.self) == 0)
            #expect(client.poolStatistics.inUse == 0)
        }
    }

    @Test func swallowedStatementErrorDoesNotReportACommit() async throws {
        try await withTestClient { client, _ in
            _ = try await client.query("CREATE TABLE t (n int PRIMARY KEY)")
            let error = await #expect(throws: PostgresError.self) {
                try await client.withTransaction { connection in
                    _ = try await connection.query("INSERT INTO t VALUES (1)")
                    _ = try? await connection.query("INSERT INTO t VALUES (1)") // fails; the transaction is aborted
                }
            }
            #expect(error?.sqlState == "25P02")
            let rows = try await client.query("SELECT count(*) FROM t")
            #expect(try rows.first?.decode(0, as: Int.self) == 0)
        }
    }

    @Test func connectionLeftInsideATransactionIsRolledBackOnRelease() async throws {
        try await withTestClient(poolSize: 2) { client, _ in
            _ = try await client.query("CREATE TABLE t (n int)")
            try await client.withConnection { connection in
                _ = try await connection.query("BEGIN")
                _ = try await connection.query("INSERT INTO t VALUES (1)")
            }
            // Every connection of the pool must now be outside any transaction and see no row.
            for _ in 0..<8 {
                let rows = try await client.query("SELECT count(*), now() = statement_timestamp() FROM t")
                #expect(try rows.first?.decode(0, as: Int.self) == 0)
            }
        }
    }

    @Test func serializationFailuresAreRetriedUntilBothCommit() async throws {
        try await withTestClient(poolSize: 4) { client, _ in
            _ = try await client.query("CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)")
            _ = try await client.query("INSERT INTO counter VALUES (1, 0)")
            let reads = SharedCounter()
            let attempts = SharedCounter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        try await client.withTransaction(isolation: .serializable) { connection in
                            let attempt = attempts.increment()
                            let rows = try await connection.query("SELECT n FROM counter WHERE id = 1")
                            let n = try rows.first!.decode(0, as: Int.self)
                            if attempt <= 2 {
                                // Both first attempts read before either writes: a guaranteed conflict.
                                reads.increment()
                                while reads.value < 2 { try await Task.sleep(for: .milliseconds(2)) }
                            }
                            _ = try await connection.query("UPDATE counter SET n = \(n + 1) WHERE id = 1")
                        }
                    }
                }
                try await group.waitForAll()
            }
            let rows = try await client.query("SELECT n FROM counter WHERE id = 1")
            #expect(try rows.first?.decode(0, as: Int.self) == 2)
            #expect(attempts.value >= 3)
        }
    }

    @Test func givesUpAfterMaxAttempts() async throws {
        try await withTestClient { client, _ in
            let attempts = SharedCounter()
            let error = await #expect(throws: PostgresError.self) {
                try await client.withTransaction(isolation: .serializable, maxAttempts: 3) { connection in
                    attempts.increment()
                    _ = try await connection.query("DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40001'; END $$")
                }
            }
            #expect(error?.isSerializationFailure == true)
            #expect(attempts.value == 3)
        }
    }
}

import ParleyObservability
import ParleyPostgres

/// A client on `configuration` for the length of `body`, shut down whichever way `body` ends.
public func withPostgresClient<T>(
    _ configuration: PostgresConfiguration, logger: Logger = TestEnvironment.capturingLogger().logger,
    _ body: (PostgresClient) async throws -> T
) async throws -> T {
    let client = PostgresClient(configuration: configuration, group: TestEnvironment.eventLoopGroup, logger: logger)
    do {
        let result = try await body(client)
        await client.shutdown()
        return result
    } catch {
        await client.shutdown()
        throw error
    }
}

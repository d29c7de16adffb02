import ParleyLiveSupport
import ParleyTestSupport
import Testing

@testable import ParleyApp
@testable import ParleyPostgres

/// Two instances on one database: one coordinates (the metric says which), and the other takes over once it stops.
@Suite struct DeploymentCoordinatorTests {
    private func coordinates(_ live: LiveApp) async throws -> Bool {
        let metrics = try await live.client().get("/metrics").text
        if metrics.contains("\nparley_coordinator 1") { return true }
        #expect(metrics.contains("\nparley_coordinator 0"), "the gauge is missing")
        return false
    }

    @Test func oneInstanceCoordinatesAndAnotherTakesOverWhenItStops() async throws {
        try await withDatabase { url in
            let first = try await LiveApp(databaseURL: url)
            var second: LiveApp?
            do {
                #expect(try await eventually(timeout: .seconds(30)) { first.app.coordinator.role.isCoordinator } != nil)
                #expect(try await coordinates(first))
                let other = try await LiveApp(databaseURL: url, masterKeyHex: first.masterKeyHex)
                second = other
                // The second keeps trying (every PostgresConfiguration.sessionLockRetryInterval) and is refused.
                let attempts = try await eventually(timeout: .seconds(30)) {
                    await other.app.database.session.lockState().attempts >= 2
                }
                #expect(attempts != nil)
                #expect(!other.app.coordinator.role.isCoordinator)
                #expect(try await !coordinates(other))
                #expect(first.app.coordinator.role.isCoordinator)

                await first.stop()
                #expect(try await eventually(timeout: .seconds(30)) { other.app.coordinator.role.isCoordinator } != nil)
                #expect(try await coordinates(other))
                await other.stop()
            } catch {
                await first.stop()
                await second?.stop()
                throw error
            }
        }
    }
}

import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyHTTP
import ParleyLiveSupport
import ParleyObservability
import ParleyPostgres
import ParleyTestSupport
@testable import ParleyUpdates
import Testing

/// openapi.yaml describes every route and code of this feature; the README and ARCHITECTURE mention them.
@Suite("Updates documentation")
struct DocumentationTests {
    @Test func everyUpdatesRouteIsDocumented() async throws {
        let logger = Logger(sink: LogSink(capturingAt: .error))
        let database = PostgresClient(configuration: PostgresConfiguration(conninfo: "postgresql://127.0.0.1:1/none"),
                                      group: TestEnvironment.eventLoopGroup, logger: logger)
        let auth = AuthModule(configuration: AuthConfiguration(masterKey: try MasterKey(bytes: SecureRandom.bytes(32))),
                              database: database, logger: logger)
        var router = Router()
        UpdatesModule(database: database, auth: auth, logger: logger).register(on: &router)
        let documented = RepositoryDocuments.documentedOperations(try RepositoryDocuments.text("openapi.yaml"))
        #expect(router.routes.count == 6)
        for route in router.routes {
            #expect(documented[route.pattern]?.contains(route.method.rawValue.lowercased()) == true,
                    "\(route.method.rawValue) \(route.pattern) is not in openapi.yaml")
        }
        await database.shutdown()
    }

    @Test func everyUpdatesCodeIsDocumented() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        let architecture = try RepositoryDocuments.text("docs/ARCHITECTURE.md")
        for error in [APIError.releaseNotFound, .versionCodeNotIncreasing, .releaseWithdrawn] {
            #expect(yaml.contains("| \(error.code) | \(error.status) |"), "code \(error.code) missing from openapi.yaml")
            #expect(architecture.contains("| \(error.code) | \(error.status) |"),
                    "code \(error.code) missing from docs/ARCHITECTURE.md")
        }
    }

    @Test func readmeDescribesReleasesAndTheCommand() throws {
        let readme = try RepositoryDocuments.text("README.md")
        #expect(readme.contains("/api/update/check"))
        #expect(readme.contains("parley release publish"))
    }
}

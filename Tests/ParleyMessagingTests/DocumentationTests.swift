import Foundation
import ParleyApp
import ParleyAuth
import ParleyCrypto
import ParleyHTTP
import ParleyLiveSupport
@testable import ParleyMessaging
import ParleyObservability
import ParleyPostgres
import ParleyTestSupport
import Testing

/// openapi.yaml describes every messaging route and code; the README lists every setting.
@Suite("Messaging documentation")
struct DocumentationTests {
    @Test func everyMessagingRouteIsDocumented() async throws {
        let logger = Logger(sink: LogSink(capturingAt: .error))
        let database = PostgresClient(configuration: PostgresConfiguration(conninfo: "postgresql://127.0.0.1:1/none"),
                                      group: TestEnvironment.eventLoopGroup, logger: logger)
        let auth = AuthModule(configuration: AuthConfiguration(masterKey: try MasterKey(bytes: SecureRandom.bytes(32))),
                              database: database, logger: logger)
        let module = MessagingModule(configuration: MessagingConfiguration(), database: database,
                                     authenticator: auth.authenticator)
        var router = Router()
        module.register(on: &router)
        let documented = RepositoryDocuments.documentedOperations(try RepositoryDocuments.text("openapi.yaml"))
        #expect(router.routes.count == 21)
        for route in router.routes {
            #expect(documented[route.pattern]?.contains(route.method.rawValue.lowercased()) == true,
                    "\(route.method.rawValue) \(route.pattern) is not in openapi.yaml")
        }
        await database.shutdown()
    }

    @Test func everyMessagingCodeIsDocumented() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        let architecture = try RepositoryDocuments.text("docs/ARCHITECTURE.md")
        for code in 1100...1117 {
            #expect(yaml.contains("| \(code) |"), "code \(code) missing from openapi.yaml's table")
            #expect(architecture.contains("\(code)"), "code \(code) missing from docs/ARCHITECTURE.md")
        }
    }

    @Test func readmeListsEverySetting() throws {
        let readme = try RepositoryDocuments.text("README.md")
        for setting in Configuration.settings {
            #expect(readme.contains("| `\(setting.name)` |"), "\(setting.name) missing from the README's settings table")
        }
    }
}

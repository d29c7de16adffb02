import Foundation
import ParleyApp
import ParleyAuth
import ParleyCrypto
import ParleyHTTP
import ParleyLiveSupport
import ParleyObservability
import ParleyPostgres
import ParleyPush
import ParleyTestSupport
import Testing

/// openapi.yaml describes every push route and code; ARCHITECTURE lists the codes; the README the settings.
@Suite("Push documentation")
struct PushDocumentationTests {
    struct NoSender: PushSender {
        func send(_ notification: PushNotification, credentials: APNsCredentials) async -> PushOutcome { .delivered }
    }

    @Test func everyPushRouteIsDocumented() async throws {
        let logger = Logger(sink: LogSink(capturingAt: .error))
        let database = PostgresClient(configuration: PostgresConfiguration(conninfo: "postgresql://127.0.0.1:1/none"),
                                      group: TestEnvironment.eventLoopGroup, logger: logger)
        let masterKey = try MasterKey(bytes: SecureRandom.bytes(32))
        let auth = AuthModule(configuration: AuthConfiguration(masterKey: masterKey), database: database, logger: logger)
        let module = PushModule(configuration: PushConfiguration(), database: database, authenticator: auth.authenticator,
                                sessionEvents: auth.events, keys: PushKeyBox(masterKey: masterKey), sender: NoSender(),
                                logger: logger)
        var router = Router()
        module.register(on: &router)
        let documented = RepositoryDocuments.documentedOperations(try RepositoryDocuments.text("openapi.yaml"))
        #expect(router.routes.count == 4)
        for route in router.routes {
            #expect(documented[route.pattern]?.contains(route.method.rawValue.lowercased()) == true,
                    "\(route.method.rawValue) \(route.pattern) is not in openapi.yaml")
        }
        await database.shutdown()
    }

    @Test func everyPushCodeIsDocumented() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        let architecture = try RepositoryDocuments.text("docs/ARCHITECTURE.md")
        for error in [APIError.pushTokenNotFound, .pushUserMismatch] {
            #expect(yaml.contains("| \(error.code) | \(error.status) |"), "code \(error.code) missing from openapi.yaml")
            #expect(architecture.contains("| \(error.code) | \(error.status) |"), "code \(error.code) missing from ARCHITECTURE")
            #expect((1450...1499).contains(error.code))
        }
    }

    @Test func readmeListsThePushSettingsAndTheCommand() throws {
        let readme = try RepositoryDocuments.text("README.md")
        for setting in Configuration.settings where setting.name.hasPrefix("PARLEY_PUSH_") {
            #expect(readme.contains("| `\(setting.name)` |"), "\(setting.name) missing from the README's settings table")
        }
        #expect(readme.contains("parley app push"))
        #expect(AppCommand.usage.contains("parley app push"))
    }
}

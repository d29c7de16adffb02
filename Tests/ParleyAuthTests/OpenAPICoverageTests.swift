import Foundation
import ParleyLiveSupport
@testable import ParleyAuth
import ParleyCrypto
import ParleyHTTP
import ParleyNet
import ParleyObservability
import ParleyPostgres
import ParleyTestSupport
import Testing

/// openapi.yaml describes every route the auth feature registers, and every auth error code.
@Suite("OpenAPI coverage")
struct OpenAPICoverageTests {
    @Test func everyAuthRouteIsDocumented() async throws {
        let database = PostgresClient(configuration: PostgresConfiguration(conninfo: "postgresql://127.0.0.1:1/none"),
                                      group: TestEnvironment.eventLoopGroup, logger: Logger(sink: LogSink(capturingAt: .error)))
        let module = AuthModule(configuration: AuthConfiguration(masterKey: try MasterKey(bytes: SecureRandom.bytes(32))),
                                database: database, logger: Logger(sink: LogSink(capturingAt: .error)))
        var router = Router()
        module.register(on: &router)
        let documented = RepositoryDocuments.documentedOperations(try RepositoryDocuments.text("openapi.yaml"))
        #expect(router.routes.count == 15)
        for route in router.routes {
            #expect(documented[route.pattern]?.contains(route.method.rawValue.lowercased()) == true,
                    "\(route.method.rawValue) \(route.pattern) is not in openapi.yaml")
        }
        await database.shutdown()
    }

    @Test func everyAuthCodeIsDocumented() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        for code in 1030...1041 {
            #expect(yaml.contains("| \(code) |"), "code \(code) missing from the table")
        }
    }
}

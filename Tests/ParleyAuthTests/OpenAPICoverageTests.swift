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
    static func openAPI() throws -> String {
        let url = URL(fileURLWithPath: LiveApp.migrationsDirectory).deletingLastPathComponent()
            .appendingPathComponent("openapi.yaml")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// path -> lower-case methods, from the `paths:` section (two-space path keys, four-space methods).
    static func documentedOperations(_ yaml: String) -> [String: Set<String>] {
        var result: [String: Set<String>] = [:]
        var inPaths = false
        var current: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths && !line.hasPrefix(" ") && !line.isEmpty { inPaths = false }
            guard inPaths else { continue }
            if line.hasPrefix("  /") && line.hasSuffix(":") && !line.hasPrefix("   ") {
                current = String(line.dropFirst(2).dropLast())
            } else if let path = current, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                result[path, default: []].insert(String(line.dropFirst(4).dropLast()))
            }
        }
        return result
    }

    @Test func everyAuthRouteIsDocumented() async throws {
        let database = PostgresClient(configuration: PostgresConfiguration(conninfo: "postgresql://127.0.0.1:1/none"),
                                      group: TestEnvironment.eventLoopGroup, logger: Logger(sink: LogSink(capturingAt: .error)))
        let module = AuthModule(configuration: AuthConfiguration(masterKey: try MasterKey(bytes: SecureRandom.bytes(32))),
                                database: database, logger: Logger(sink: LogSink(capturingAt: .error)))
        var router = Router()
        module.register(on: &router)
        let documented = Self.documentedOperations(try Self.openAPI())
        #expect(router.routes.count == 15)
        for route in router.routes {
            #expect(documented[route.pattern]?.contains(route.method.rawValue.lowercased()) == true,
                    "\(route.method.rawValue) \(route.pattern) is not in openapi.yaml")
        }
        await database.shutdown()
    }

    @Test func everyAuthCodeIsDocumented() throws {
        let yaml = try Self.openAPI()
        for code in 1030...1041 {
            #expect(yaml.contains("| \(code) |"), "code \(code) missing from the table")
        }
    }
}

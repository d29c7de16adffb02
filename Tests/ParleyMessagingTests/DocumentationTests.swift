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
    static let root = URL(fileURLWithPath: LiveApp.migrationsDirectory).deletingLastPathComponent()

    static func text(_ file: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
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
        let documented = Self.documentedOperations(try Self.text("openapi.yaml"))
        #expect(router.routes.count == 21)
        for route in router.routes {
            #expect(documented[route.pattern]?.contains(route.method.rawValue.lowercased()) == true,
                    "\(route.method.rawValue) \(route.pattern) is not in openapi.yaml")
        }
        await database.shutdown()
    }

    @Test func everyMessagingCodeIsDocumented() throws {
        let yaml = try Self.text("openapi.yaml")
        let architecture = try Self.text("docs/ARCHITECTURE.md")
        for code in 1100...1115 {
            #expect(yaml.contains("| \(code) |"), "code \(code) missing from openapi.yaml's table")
            #expect(architecture.contains("\(code)"), "code \(code) missing from docs/ARCHITECTURE.md")
        }
    }

    @Test func readmeListsEverySetting() throws {
        let readme = try Self.text("README.md")
        for setting in Configuration.settings {
            #expect(readme.contains("| `\(setting.name)` |"), "\(setting.name) missing from the README's settings table")
        }
    }
}

import Foundation
import ParleyApp
import ParleyAuth
import ParleyCrypto
import ParleyHTTP
import ParleyLiveSupport
import ParleyObservability
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyMessaging

/// openapi.yaml describes every messaging code (WholeAPIDocumentationTests checks the routes); the README lists every setting.
@Suite("Messaging documentation")
struct DocumentationTests {
    @Test func everyMessagingCodeIsDocumented() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        let architecture = try RepositoryDocuments.text("docs/ARCHITECTURE.md")
        for code in 1100...1145 where !(1134...1136).contains(code) {
            #expect(yaml.contains("| \(code) |"), "code \(code) missing from openapi.yaml's table")
            #expect(architecture.contains("\(code)"), "code \(code) missing from docs/ARCHITECTURE.md")
        }
    }

    @Test func readmeListsEverySetting() throws {
        let readme = try RepositoryDocuments.text("README.md")
        for setting in Configuration.settings {
            #expect(
                readme.contains("| `\(setting.name)` |"), "\(setting.name) missing from the README's settings table")
        }
    }
}

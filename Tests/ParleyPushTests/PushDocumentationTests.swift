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

/// openapi.yaml describes every push code (WholeAPIDocumentationTests checks the routes); ARCHITECTURE lists the codes; the README the settings.
@Suite("Push documentation")
struct PushDocumentationTests {
    @Test func everyPushCodeIsDocumented() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        let architecture = try RepositoryDocuments.text("docs/ARCHITECTURE.md")
        for error in [APIError.pushTokenNotFound] {
            #expect(
                yaml.contains("| \(error.code) | \(error.status) |"), "code \(error.code) missing from openapi.yaml")
            #expect(
                architecture.contains("| \(error.code) | \(error.status) |"),
                "code \(error.code) missing from ARCHITECTURE")
            #expect((1450...1499).contains(error.code))
        }
    }

    @Test func readmeListsThePushSettingsAndTheCommand() throws {
        let readme = try RepositoryDocuments.text("README.md")
        for setting in Configuration.settings where setting.name.hasPrefix("PARLEY_PUSH_") {
            #expect(
                readme.contains("| `\(setting.name)` |"), "\(setting.name) missing from the README's settings table")
        }
        #expect(readme.contains("parley app push"))
        #expect(AppCommand.usage.contains("parley app push"))
    }
}

import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyHTTP
import ParleyLiveSupport
import ParleyObservability
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyUpdates

/// openapi.yaml describes every code of this feature (WholeAPIDocumentationTests checks the routes); the README and ARCHITECTURE mention them.
@Suite("Updates documentation")
struct DocumentationTests {
    @Test func everyUpdatesCodeIsDocumented() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        let architecture = try RepositoryDocuments.text("docs/ARCHITECTURE.md")
        for error in [APIError.releaseNotFound, .versionCodeNotIncreasing, .releaseWithdrawn] {
            #expect(
                yaml.contains("| \(error.code) | \(error.status) |"), "code \(error.code) missing from openapi.yaml")
            #expect(
                architecture.contains("| \(error.code) | \(error.status) |"),
                "code \(error.code) missing from docs/ARCHITECTURE.md")
        }
    }

    @Test func readmeDescribesReleasesAndTheCommand() throws {
        let readme = try RepositoryDocuments.text("README.md")
        #expect(readme.contains("/api/update/check"))
        #expect(readme.contains("parley release publish"))
    }
}

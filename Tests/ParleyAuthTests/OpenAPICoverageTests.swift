import Foundation
import ParleyCrypto
import ParleyHTTP
import ParleyLiveSupport
import ParleyNet
import ParleyObservability
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyAuth

/// openapi.yaml describes every auth error code (WholeAPIDocumentationTests checks the routes).
@Suite("OpenAPI coverage")
struct OpenAPICoverageTests {
    @Test func everyAuthCodeIsDocumented() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        for code in Array(1030...1041) + [1049, 1050, 1051] {
            #expect(yaml.contains("| \(code) |"), "code \(code) missing from the table")
        }
    }
}

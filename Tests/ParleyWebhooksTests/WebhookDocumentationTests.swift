import ParleyApp
import ParleyHTTP
import ParleyLiveSupport
import ParleyWebhooks
import Testing

/// Every webhook code, setting, event and the command are documented where the project documents them.
@Suite struct WebhookDocumentationTests {
    @Test func everyWebhookCodeIsDocumented() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        let architecture = try RepositoryDocuments.text("docs/ARCHITECTURE.md")
        for error in [
            APIError.messageDeniedByApp, .beforeSendUnavailable, .webhookDeliveryNotFound, .webhookDeliveryNotDead,
            .webhookNotConfigured,
        ] {
            #expect(
                yaml.contains("| \(error.code) | \(error.status) |"), "code \(error.code) missing from openapi.yaml")
            #expect(
                architecture.contains("| \(error.code) | \(error.status) |"),
                "code \(error.code) missing from ARCHITECTURE")
            #expect((1600...1619).contains(error.code))
        }
    }

    @Test func everyEventHasItsPayloadInOpenAPIWebhooks() throws {
        let yaml = try RepositoryDocuments.text("openapi.yaml")
        let section = try #require(yaml.split(separator: "\nwebhooks:\n", maxSplits: 1).last)
        let webhooks = "\n" + section.split(separator: "\ncomponents:\n", maxSplits: 1)[0]
        for event in WebhookEvent.allCases {
            #expect(webhooks.contains("\n  \(event.rawValue):\n"), "\(event.rawValue) missing from openapi's webhooks")
            #expect(webhooks.contains("event: { const: \(event.rawValue) }"), "\(event.rawValue) has no payload")
        }
    }

    @Test func readmeListsTheWebhookSettingsAndTheCommand() throws {
        let readme = try RepositoryDocuments.text("README.md")
        let settings = Configuration.settings.filter { $0.name.hasPrefix("PARLEY_WEBHOOK_") }
        #expect(settings.count == 4)
        for setting in settings {
            #expect(
                readme.contains("| `\(setting.name)` |"), "\(setting.name) missing from the README's settings table")
        }
        #expect(readme.contains("parley app webhook"))
        #expect(AppCommand.usage.contains("parley app webhook"))
        #expect(AppCommand.usage.contains("parley app describe"))
    }
}

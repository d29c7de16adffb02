import Foundation
import ParleyApp
import ParleyLiveSupport
import ParleyTestSupport
import ParleyWebhooks
import Testing

/// `parley app webhook` and `parley app describe` through `AppCommand`, and the address check at connect time.
@Suite(.serialized) struct WebhookCommandTests {
    static func run(_ arguments: [String], _ configuration: Configuration) async throws -> [String] {
        try await CommandOutput.lines { try await AppCommand.run(arguments, configuration: configuration, output: $0) }
    }

    @Test func configuresShowsAndRemovesAWebhookAndRefusesBadValues() async throws {
        try await withDatabase { url in
            let live = try await LiveApp(databaseURL: url)
            do {
                let strict = try LiveApp.configuration(databaseURL: url, masterKeyHex: live.masterKeyHex)
                let open = try LiveApp.configuration(
                    databaseURL: url, masterKeyHex: live.masterKeyHex,
                    environment: ["PARLEY_WEBHOOK_ALLOW_PRIVATE": "1"])
                let (app, _) = try await live.createApp(name: "Webhook CLI")
                let none = try await Self.run(["webhook", app.appKey], strict)
                #expect(CommandOutput.field("webhook", in: none) == "(none)")

                for bad in [
                    ["--url", "http://127.0.0.1:9/hook", "--events", "after_send"], // private, not allowed
                    ["--url", "http://[::1]:9/hook", "--events", "after_send"],
                    ["--url", "http://169.254.169.254/latest", "--events", "after_send"],
                    ["--url", "ftp://example.com/", "--events", "after_send"],
                    ["--url", "http://127.0.0.1:9/hook"], // a new webhook needs events
                    ["--events", "after_send"], // ... and a URL
                ] {
                    await #expect(throws: AppCommand.UsageError.self, "\(bad)") {
                        try await Self.run(["webhook", app.appKey] + bad, strict)
                    }
                }
                for bad in [
                    ["--events", "after_send,after_sned"], ["--timeout-ms", "50"], ["--timeout-ms", "20000"],
                    ["--on-failure", "maybe"], ["--enable", "--disable"], ["--remove", "--disable"],
                    ["--batch-size", "0"], ["--batch-size", "101"],
                ] {
                    await #expect(throws: AppCommand.UsageError.self, "\(bad)") {
                        try await Self.run(
                            ["webhook", app.appKey, "--url", "http://127.0.0.1:9/hook", "--events", "after_send"]
                                + bad, open)
                    }
                }
                do {
                    _ = try await Self.run(["webhook", app.appKey, "--events", "after_sned"], open)
                    Issue.record("an unknown event was accepted")
                } catch let error as AppCommand.UsageError {
                    #expect(error.description.contains("unknown webhook event `after_sned`"))
                }

                let set = try await Self.run(
                    [
                        "webhook", app.appKey, "--url", "http://127.0.0.1:9/hook", "--events",
                        "before_send,after_send", "--timeout-ms", "500", "--on-failure", "deny", "--batch-size", "50",
                    ], open)
                #expect(CommandOutput.field("webhookUrl", in: set) == "http://127.0.0.1:9/hook")
                #expect(CommandOutput.field("webhookEvents", in: set) == "before_send,after_send")
                #expect(CommandOutput.field("webhookTimeout", in: set) == "500 ms")
                #expect(CommandOutput.field("webhookFailure", in: set) == "deny")
                #expect(CommandOutput.field("webhookBatch", in: set) == "50")
                // Changing one value keeps the others; --disable keeps the settings but calls nothing.
                let disabled = try await Self.run(["webhook", app.appKey, "--disable", "--events", "login"], open)
                #expect(CommandOutput.field("webhookEnabled", in: disabled) == "false")
                #expect(CommandOutput.field("webhookEvents", in: disabled) == "login")
                #expect(CommandOutput.field("webhookTimeout", in: disabled) == "500 ms")
                #expect(CommandOutput.field("webhookBatch", in: disabled) == "50")
                let described = try await Self.run(["describe", app.appKey], strict)
                #expect(CommandOutput.field("appKey", in: described) == app.appKey)
                #expect(CommandOutput.field("webhookUrl", in: described) == "http://127.0.0.1:9/hook")
                let removed = try await Self.run(["webhook", app.appKey, "--remove"], strict)
                #expect(removed == ["webhook removed"])
                #expect(try await live.app.webhooks.settingsRepository.settings(appId: app.id) == nil)
                await live.stop()
            } catch {
                await live.stop()
                throw error
            }
        }
    }

    /// A URL stored while it resolved to a public address (here: written directly) that now reaches a private one
    /// is refused when connecting, not only when configured.
    @Test func privateAddressesAreRefusedWhenConnecting() async throws {
        try await WebhookFixture.run(environment: ["PARLEY_WEBHOOK_ALLOW_PRIVATE": "0"]) { fixture in
            try await fixture.configure([.afterSend, .beforeSend], timeoutMilliseconds: 1000, onFailure: .deny)
            let users = try await fixture.messaging.users(2)
            let refused = try await fixture.messaging.send(users[0], to: users[1].userId, content: "hi")
            #expect(refused.code == 1601)
            try await fixture.configure([.afterSend])
            _ = try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "hi")
            let failed = try await eventually(timeout: .seconds(30)) {
                try await fixture.deliveries(state: "pending").contains {
                    $0.lastError?.contains("address not allowed: 127.0.0.1") == true
                }
            }
            #expect(failed != nil)
            #expect(fixture.receiver.calls.isEmpty)
        }
    }
}

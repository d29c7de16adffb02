import ParleyAuth
import ParleyPostgres
import ParleyWebhooks

/// `parley app webhook` and the webhook lines of `parley app describe`.
extension AppCommand {
    static let webhookUsage = """
          parley app webhook APP_KEY [--url URL] [--events before_send,after_send,...] [--timeout-ms 100-10000]
                                     [--on-failure allow|deny] [--batch-size 1-100] [--enable|--disable] | --remove
                                     the app's webhooks: calls to its backend, signed with the app secret; the URL
                                     must not resolve to a private address unless PARLEY_WEBHOOK_ALLOW_PRIVATE=1;
                                     --on-failure is what before_send does on a timeout or error; --batch-size: up
                                     to that many after-events per call (default 1: each alone); without options
                                     prints the settings. Events: \(WebhookEvent.allCases.map(\.rawValue).joined(separator: ", "))
          parley app describe APP_KEY
                                     the app's settings, its webhook included (never its secret)
        """

    /// `parley app webhook`: checks every value before storing any; a new webhook needs --url and --events.
    static func webhook(
        _ options: inout Options, repository: AppRepository, database: PostgresClient, configuration: Configuration,
        output: (String) -> Void
    ) async throws {
        let url = options.take("--url")
        let eventList = options.take("--events")
        let timeout = try options.takeInt("--timeout-ms")
        let failureName = options.take("--on-failure")
        let batchSize = try options.takeInt("--batch-size")
        let enable = options.takeFlag("--enable")
        let disable = options.takeFlag("--disable")
        let remove = options.takeFlag("--remove")
        let key = try options.takePositional("APP_KEY")
        try options.finish()
        if enable && disable { throw UsageError(description: "--enable and --disable exclude each other") }
        let changes =
            url != nil || eventList != nil || timeout != nil || failureName != nil || batchSize != nil || enable
            || disable
        if remove && changes { throw UsageError(description: "--remove takes no other option") }
        guard let target = try await repository.find(key: key) else {
            throw UsageError(description: "no app with key \(key)")
        }
        let settings = WebhookSettingsRepository(database: database)
        if remove {
            output(try await settings.remove(appId: target.id) ? "webhook removed" : "the app had no webhook")
            return
        }
        if changes {
            let parsedEvents = try eventList.map(parseEvents)
            let stored = try await settings.settings(appId: target.id)
            guard let newURL = url ?? stored?.url, let newEvents = parsedEvents ?? stored?.events else {
                throw UsageError(description: "a new webhook needs --url and --events")
            }
            if let timeout, !WebhookSettings.timeoutRange.contains(timeout) {
                throw UsageError(description: "--timeout-ms must be 100 to 10000")
            }
            if let batchSize, !WebhookSettings.batchSizeRange.contains(batchSize) {
                throw UsageError(description: "--batch-size must be 1 to 100")
            }
            var policy = stored?.onFailure ?? .allow
            if let failureName {
                guard let parsed = WebhookSettings.FailurePolicy(rawValue: failureName) else {
                    throw UsageError(description: "--on-failure must be allow or deny")
                }
                policy = parsed
            }
            if url != nil {
                do {
                    try WebhookURL(newURL).check(
                        WebhookAddressPolicy(allowPrivate: configuration.webhooks.allowPrivateAddresses))
                } catch {
                    throw UsageError(description: error.description)
                }
            }
            try await settings.save(
                WebhookSettings(
                    appId: target.id, url: newURL, events: newEvents,
                    timeoutMilliseconds: timeout ?? stored?.timeoutMilliseconds
                        ?? WebhookSettings.defaultTimeoutMilliseconds,
                    onFailure: policy, batchSize: batchSize ?? stored?.batchSize ?? 1,
                    enabled: disable ? false : (enable ? true : stored?.enabled ?? true)))
        }
        output("appKey          \(target.appKey)")
        describeWebhook(try await settings.settings(appId: target.id), output: output)
    }

    private static func parseEvents(_ text: String) throws -> [WebhookEvent] {
        do { return try WebhookEvent.parseList(text) } catch { throw UsageError(description: error.description) }
    }

    static func describeWebhook(_ settings: WebhookSettings?, output: (String) -> Void) {
        guard let settings else {
            output("webhook         (none)")
            return
        }
        output("webhookUrl      \(settings.url)")
        output("webhookEvents   \(settings.events.map(\.rawValue).joined(separator: ","))")
        output("webhookTimeout  \(settings.timeoutMilliseconds) ms")
        output("webhookFailure  \(settings.onFailure.rawValue)")
        output("webhookBatch    \(settings.batchSize)")
        output("webhookEnabled  \(settings.enabled)")
    }
}

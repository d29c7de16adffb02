import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyLiveSupport
import ParleyTestSupport
import ParleyWebhooks

/// A live server whose webhooks may reach 127.0.0.1, one app, and a receiver playing the app's backend.
struct WebhookFixture: Sendable {
    let messaging: MessagingFixture
    let receiver: WebhookReceiver

    var live: LiveApp { messaging.live }
    var webhooks: WebhooksModule { live.app.webhooks }

    static func run(
        environment: [String: String] = [:],
        beforeSend: @escaping WebhookReceiver.BeforeSendRule = { _ in
            #"{"action":"allow"}"#
        }, _ body: (WebhookFixture) async throws -> Void
    ) async throws {
        var env = ["PARLEY_WEBHOOK_ALLOW_PRIVATE": "1", "PARLEY_WEBHOOK_POLL_MS": "50"]
        env.merge(environment) { _, new in new }
        let receiver = try await WebhookReceiver(beforeSend: beforeSend)
        do {
            try await MessagingFixture.run(environment: env) { messaging in
                try await body(WebhookFixture(messaging: messaging, receiver: receiver))
            }
            await receiver.shutdown()
        } catch {
            await receiver.shutdown()
            throw error
        }
    }

    /// Stores the app's webhook (as `parley app webhook` does) and waits until the server's cache has it.
    func configure(
        _ events: [WebhookEvent], timeoutMilliseconds: Int = 2000, onFailure: WebhookSettings.FailurePolicy = .allow,
        batchSize: Int = 1
    ) async throws {
        let settings = WebhookSettings(
            appId: messaging.appId, url: receiver.url, events: events, timeoutMilliseconds: timeoutMilliseconds,
            onFailure: onFailure, batchSize: batchSize)
        try await webhooks.settingsRepository.save(settings)
        guard
            try await eventually(
                timeout: .seconds(30), { webhooks.settings.settings(appId: messaging.appId) == settings })
                != nil
        else { throw TestFailure("the server never learned of the webhook settings") }
    }

    /// A request signed with the app secret, as the app's backend sends one.
    func signed(_ method: String, _ target: String, json: [String: Any]? = nil) async throws -> TestResponse {
        try await messaging.admin(method, target, json: json)
    }
}

/// A delivery as `GET /api/admin/webhooks/deliveries` lists it.
struct DeliveryRow: Sendable, Equatable {
    var id: String
    var event: String
    var key: String
    var events: Int
    var attempts: Int
    var lastStatus: Int?
    var lastError: String?
}

extension WebhookFixture {
    func deliveries(state: String) async throws -> [DeliveryRow] {
        let response = try await signed("GET", "/api/admin/webhooks/deliveries?state=\(state)")
        guard response.status == 200 else {
            throw TestFailure("listing deliveries: \(response.status) \(response.text)")
        }
        return (response.data["deliveries"] as? [[String: Any]] ?? []).map { row in
            DeliveryRow(
                id: row["id"] as? String ?? "", event: row["event"] as? String ?? "", key: row["key"] as? String ?? "",
                events: row["events"] as? Int ?? -1, attempts: row["attempts"] as? Int ?? -1,
                lastStatus: row["lastStatus"] as? Int,
                lastError: row["lastError"] as? String)
        }
    }
}

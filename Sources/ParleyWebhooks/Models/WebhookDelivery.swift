import Foundation

/// One queued event, or one group of events queued and delivered together, as the admin API lists it
/// (`GET /api/admin/webhooks/deliveries`).
public struct WebhookDelivery: Sendable, Equatable, Encodable {
    public enum State: String, Sendable, Equatable, Codable, CaseIterable {
        case pending, delivered, dead
    }

    public var id: String
    public var event: String
    /// The conversation id (message and group events) or the user id (user events); `*` for the events of an app
    /// with a batch size above 1, which go as one ordered stream.
    public var key: String
    /// How many events: 1, or the size of a group (an app with batches queues its sends a group per statement).
    public var events: Int
    public var state: State
    public var attempts: Int
    public var lastStatus: Int?
    public var lastError: String?
    public var nextAttemptAt: Date?
    public var createdAt: Date
    public var finishedAt: Date?
}

/// A page of deliveries; `nextCursor` (nil at the end) continues it.
struct WebhookDeliveryPage: Sendable, Encodable {
    var deliveries: [WebhookDelivery]
    var nextCursor: String?

    enum CodingKeys: String, CodingKey { case deliveries, nextCursor }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(deliveries, forKey: .deliveries)
        // Written even when nil: the end of the list is `"nextCursor": null`, not a missing field.
        if let nextCursor {
            try container.encode(nextCursor, forKey: .nextCursor)
        } else {
            try container.encodeNil(forKey: .nextCursor)
        }
    }
}

/// An app's webhook settings (`app_webhooks`, written by `parley app webhook`).
public struct WebhookSettings: Sendable, Equatable, Encodable {
    /// What `before_send` does when the backend times out, fails or answers nonsense.
    public enum FailurePolicy: String, Sendable, Equatable, Codable {
        case allow, deny
    }

    public var appId: Int64
    public var url: String
    public var events: [WebhookEvent]
    public var timeoutMilliseconds: Int
    public var onFailure: FailurePolicy
    /// After-events per call (1: each alone; more: `{"events": [...]}` of up to this many).
    public var batchSize: Int
    public var enabled: Bool

    public static let timeoutRange = 100...10_000
    public static let defaultTimeoutMilliseconds = 2000
    public static let batchSizeRange = 1...100

    public init(
        appId: Int64, url: String, events: [WebhookEvent], timeoutMilliseconds: Int = defaultTimeoutMilliseconds,
        onFailure: FailurePolicy = .allow, batchSize: Int = 1, enabled: Bool = true
    ) {
        self.appId = appId
        self.url = url
        self.events = events
        self.timeoutMilliseconds = timeoutMilliseconds
        self.onFailure = onFailure
        self.batchSize = batchSize
        self.enabled = enabled
    }

    public func wants(_ event: WebhookEvent) -> Bool { enabled && events.contains(event) }

    enum CodingKeys: String, CodingKey {
        case url, events, timeoutMilliseconds = "timeoutMs", onFailure, batchSize, enabled
    }
}

import Foundation

/// The events an app's backend can subscribe to (`parley app webhook --events`). `before_send` is a synchronous
/// call in the send path; every other event is queued by a trigger in the change's transaction (migrations/0022) and
/// delivered by `WebhookWorker`. The payload of each is documented in openapi.yaml (`webhooks:`).
public enum WebhookEvent: String, Sendable, Hashable, CaseIterable, Codable {
    case beforeSend = "before_send"
    case afterSend = "after_send"
    case afterRevoke = "after_revoke"
    case afterEdit = "after_edit"
    case login
    case logout
    case userDeleted = "user_deleted"
    case groupCreated = "group_created"
    case groupMemberAdded = "group_member_added"
    case groupMemberRemoved = "group_member_removed"
    case groupDissolved = "group_dissolved"
    case friendRequest = "friend_request"
    case friendAdded = "friend_added"
    case friendRemoved = "friend_removed"
    case reportCreated = "report_created"

    /// A comma-separated list of event names; throws naming the first unknown one.
    public static func parseList(_ text: String) throws(WebhookSettingsError) -> [WebhookEvent] {
        var events: [WebhookEvent] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: true) {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            guard let event = WebhookEvent(rawValue: trimmed) else {
                throw WebhookSettingsError(
                    description: "unknown webhook event `\(trimmed)`; known events: "
                        + allCases.map(\.rawValue).joined(separator: ", "))
            }
            if !events.contains(event) { events.append(event) }
        }
        guard !events.isEmpty else { throw WebhookSettingsError(description: "--events needs at least one event") }
        return events
    }
}

/// A webhook setting that cannot be stored, with what is wrong.
public struct WebhookSettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

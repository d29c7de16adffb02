import Foundation

/// One emoji's reactions on a message as one user sees them: how many reacted with it and whether they did.
public struct MessageReaction: Sendable, Hashable, Encodable {
    public var emoji: String
    public var count: Int64
    /// The viewer reacted with this emoji (always false in events, which go to every member alike).
    public var me: Bool
}

/// A message pinned in a conversation.
public struct PinnedMessage: Sendable, Encodable {
    public var message: IMMessage
    public var pinnedBy: String
    public var pinnedAt: Date
}

/// The limits of what members do with messages.
enum MessageInteractions {
    /// Different emojis on one message (each user's reactions count once per emoji).
    static let maxEmojisPerMessage = 50
    /// Reactions one user puts on one message.
    static let maxReactionsPerUser = 20
    /// Pinned messages in one conversation.
    static let maxPins = 100
}

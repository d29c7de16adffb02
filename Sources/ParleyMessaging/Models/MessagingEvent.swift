import ParleyJSON

/// A change other users (or the user's other devices) must see, published on `MessagingEvents` after it committed.
/// The realtime gateway turns these into frames for every connected device of the audience.
public struct MessagingEvent: Sendable {
    public enum Audience: Sendable, Hashable {
        /// Every member of the conversation (the gateway resolves and caches the member list).
        case conversationMembers
        /// Every member plus users who just left it (so that they learn they were removed).
        case conversationMembersAnd([String])
        /// One user's devices only.
        case user(String)
        /// These users' devices (events of the social graph: both sides of a friendship, a user's friends).
        case users([String])
    }

    public enum Payload: Sendable {
        case message(IMMessage)
        case revoke(messageId: String, conversationId: String, operatorId: String, seq: Int64)
        case edit(IMMessage)
        case read(conversationId: String, userId: String, seq: Int64)
        /// A change of the user's own view of a conversation (pin, draft, mute, clear, delete) or of their membership.
        case conversation(JSONValue)
        /// A change that belongs to no conversation (friends, blocks, profiles; `UserEventKind`): the frame's type
        /// and data. Its event's `conversationId` is empty.
        case userEvent(UserEventKind, JSONValue)
        /// A change of a conversation's messages every member sees (reactions, pins): the frame's type and data.
        case conversationEvent(ConversationEventKind, JSONValue)
    }

    public var appId: Int64
    public var conversationId: String
    public var audience: Audience
    /// What caused the event (`Principal.origin`: a REST request's session, a frame's connection): it has the
    /// answer, so it skips the echo.
    public var origin: String?
    public var payload: Payload
    /// Group membership changed: caches of the member list must be refreshed.
    public var membershipChanged: Bool = false
    /// The JSON of a `.message` payload's message when the publisher already wrote it (the send's own answer
    /// carries the same bytes): encoded once per message, not once per use.
    public var messageJSON: [UInt8]? = nil
    /// A `.message` the admin API sent online only: never stored (seq 0), delivered to the sockets open now, and
    /// relayed to other instances inline (they cannot load it). At most `maxOnlineOnlyBytes` of JSON.
    public var onlineOnly: Bool = false

    /// The largest online-only message (its JSON): it must fit in one NOTIFY payload (8,000 bytes) with its
    /// descriptor.
    public static let maxOnlineOnlyBytes = 6000
}

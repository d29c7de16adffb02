/// Events about a conversation's messages that every member sees (the WebSocket frame's type, and the sync change's
/// type; docs/protocol.md lists their data). Recorded as conversation-wide rows of `changes`.
public enum ConversationEventKind: String, Sendable, CaseIterable {
    /// A member added or removed a reaction: the message's counts after the change.
    case reaction
    case messagePinned = "message_pinned"
    case messageUnpinned = "message_unpinned"
}

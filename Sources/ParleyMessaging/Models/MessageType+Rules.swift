import ParleyMessageModel

/// Messaging's rules per kind of message.
extension MessageType {
    /// Only the server writes notify messages (group changes).
    var isClientSendable: Bool { self != .notify }
    /// Only text can be edited.
    var isEditable: Bool { self == .text || self == .richText }
    /// Notify messages do not count toward unread counts (the migration's `counted_total`).
    var countsAsUnread: Bool { self != .notify }
}

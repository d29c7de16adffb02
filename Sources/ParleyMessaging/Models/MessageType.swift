/// The kinds of message Parley stores; structured ones are validated by `MessageContentValidator`.
public enum MessageType: String, Sendable, Hashable, Codable, CaseIterable {
    case text, image, video, audio, file, custom, location, notify, richText, callAudio, callVideo, forward

    /// Only the server writes notify messages (group changes).
    var isClientSendable: Bool { self != .notify }
    /// Only text can be edited.
    var isEditable: Bool { self == .text || self == .richText }
    /// Notify messages do not count toward unread counts (the migration's `counted_total`).
    var countsAsUnread: Bool { self != .notify }
}

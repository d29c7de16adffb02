/// One-to-one or group conversation.
public enum ChatType: String, Sendable, Hashable, Codable {
    case single
    case group
}

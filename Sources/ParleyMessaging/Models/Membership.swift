import ParleyPostgres

/// A group member's role.
public enum GroupRole: String, Sendable, Hashable, Codable {
    case owner, admin, member

    /// Owners and admins manage the group and may revoke anybody's message.
    var isManager: Bool { self != .member }
}

/// One user's row of `conversation_members`: their membership and their own view of the conversation.
struct Membership: Sendable, Hashable {
    var userId: String
    var conversationId: String
    var peerId: String?
    var role: GroupRole
    var blocked: Bool
    var readSeq: Int64
    var clearSeq: Int64
    var hiddenSeq: Int64?
    var isPinned: Bool
    var draftText: String
    var muted: Bool

    /// The app acting on a group through the admin API: the owner's powers without a row of its own.
    static func app(_ operatorId: String, groupId: String) -> Membership {
        Membership(
            userId: operatorId, conversationId: ConversationID.group(groupId), peerId: nil, role: .owner,
            blocked: false,
            readSeq: 0, clearSeq: 0, hiddenSeq: nil, isPinned: false, draftText: "", muted: false)
    }

    /// History this user may see starts after this seq.
    var visibleAfter: Int64 { clearSeq }

    static let fields = [
        "user_id", "conversation_id", "peer_id", "role", "blocked", "read_seq", "clear_seq",
        "hidden_seq", "is_pinned", "draft_text", "muted",
    ]

    /// The columns as `m_<name>`, so they can sit next to another table's columns in one row.
    static func columns(prefix: String) -> String {
        fields.map { "\(prefix)\($0) AS m_\($0)" }.joined(separator: ", ")
    }

    static func decodeIfPresent(_ row: PostgresRow) throws -> Membership? {
        row.isNull("m_user_id") ? nil : try decode(row)
    }

    static func decode(_ row: PostgresRow) throws -> Membership {
        Membership(
            userId: try row.decode("m_user_id"), conversationId: try row.decode("m_conversation_id"),
            peerId: try row.decode("m_peer_id"),
            role: GroupRole(rawValue: try row.decode("m_role", as: String.self)) ?? .member,
            blocked: try row.decode("m_blocked"), readSeq: try row.decode("m_read_seq"),
            clearSeq: try row.decode("m_clear_seq"), hiddenSeq: try row.decode("m_hidden_seq"),
            isPinned: try row.decode("m_is_pinned"), draftText: try row.decode("m_draft_text"),
            muted: try row.decode("m_muted"))
    }
}

import ParleyHTTP

/// Request bodies of the messaging routes (validated in the services).

struct ReadRequest: Decodable {
    var seq: Int64
}

struct CreateGroupRequest: Decodable {
    var name: String
    var avatarKey: String?
    var memberIds: [String]
}

struct UpdateGroupRequest: Decodable {
    var name: String?
    /// nil: absent; .some(nil): remove the avatar.
    var avatarKey: String??

    enum CodingKeys: String, CodingKey { case name, avatarKey }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        avatarKey = try container.decodeNullable(String.self, forKey: .avatarKey)
    }
}

struct MemberIDsRequest: Decodable {
    var userIds: [String]
}

struct UpdateMemberRequest: Decodable {
    var role: String?
    var blocked: Bool?
}

struct TransferRequest: Decodable {
    var userId: String
}

/// `offset` / `limit` query parameters with bounds.
struct Paging {
    var offset: Int
    var limit: Int

    init(_ request: HTTPRequest, defaultLimit: Int, maxLimit: Int) throws(APIError) {
        let query = request.query
        offset = Int(try query.integer(for: "offset", in: 0...1_000_000) ?? 0)
        limit = try query.limit(defaultLimit: defaultLimit, max: maxLimit)
    }
}

/// `{"items": [...], "hasMore": bool}` style pages.
struct ConversationPage: Encodable {
    var conversations: [ConversationSummary]
    var hasMore: Bool
    /// Over every visible conversation of the caller, not only this page's.
    var totalUnread: Int64
}

struct MessagePage: Encodable {
    var messages: [IMMessage]
    var hasMore: Bool
}

struct MemberPage: Encodable {
    var members: [GroupMember]
    var hasMore: Bool
}

struct ClearResult: Encodable {
    var conversationId: String
    var clearSeq: Int64
}

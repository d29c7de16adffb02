import ParleyHTTP

/// Request bodies of the messaging routes (validated in the services).

struct ReadRequest: Decodable {
    var seq: Int64
}

struct CreateGroupRequest: Decodable {
    var name: String
    var avatarKey: String?
    var memberIds: [String]
    var joinPolicy: GroupJoinPolicy?
}

struct MemberIDsRequest: Decodable {
    var userIds: [String]
}

struct UpdateMemberRequest: Decodable {
    var role: String?
    var blocked: Bool?
}

struct JoinRequestBody: Decodable {
    var message: String?
}

/// `DELETE /api/im/groups/{id}/bans/{userId}`.
struct GroupUnban: Encodable {
    var userId: String
    var banned: Bool
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

/// The caller's groups in id order; `cursor` (the last group's id) asks for the next page, null at the end.
struct GroupPage: Encodable {
    var groups: [GroupInfo]
    var cursor: String?
    var hasMore: Bool

    enum CodingKeys: String, CodingKey { case groups, cursor, hasMore }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(groups, forKey: .groups)
        try container.encode(cursor, forKey: .cursor) // explicit null at the end
        try container.encode(hasMore, forKey: .hasMore)
    }
}

/// A page of a group's members; `cursor` (null on the last page) asks for the next one.
struct MemberPage: Encodable {
    var members: [GroupMember]
    var hasMore: Bool
    var cursor: String?

    enum CodingKeys: String, CodingKey { case members, hasMore, cursor }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(members, forKey: .members)
        try container.encode(hasMore, forKey: .hasMore)
        try container.encode(cursor, forKey: .cursor) // explicit null at the end
    }
}

struct ClearResult: Encodable {
    var conversationId: String
    var clearSeq: Int64
}

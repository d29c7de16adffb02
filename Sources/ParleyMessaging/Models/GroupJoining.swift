import Foundation
import ParleyJSON
import ParleyPostgres

/// Who may join a group by themselves.
public enum GroupJoinPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Anyone of the app joins at once.
    case open
    /// A join request that an owner or admin accepts or rejects.
    case approval
    /// Only owners and admins add members (every group before join policies).
    case inviteOnly = "invite_only"
}

/// A user's request to join a group (one per group and user: asking again after a rejection reopens it).
public struct GroupJoinRequest: Sendable, Hashable, Encodable {
    public enum Status: String, Sendable, Hashable, Encodable { case pending, accepted, rejected }

    public var groupId: String
    public var userId: String
    public var message: String
    public var status: Status
    public var createdAt: Date
    public var handledAt: Date?
    /// The owner or admin who accepted or rejected it.
    public var operatorId: String?

    static let columns = "group_id, user_id, message, status, created_at, handled_at, handled_by"

    static func decode(_ row: PostgresRow) throws -> GroupJoinRequest {
        GroupJoinRequest(
            groupId: try row.decode("group_id"), userId: try row.decode("user_id"), message: try row.decode("message"),
            status: Status(rawValue: try row.decode("status", as: String.self)) ?? .pending,
            createdAt: try row.decode("created_at"), handledAt: try row.decode("handled_at"),
            operatorId: try row.decode("handled_by"))
    }

    /// The event's data: the request as the routes answer it.
    var eventData: JSONValue {
        var fields: [(String, JSONValue)] = [
            ("groupId", .string(groupId)), ("userId", .string(userId)), ("message", .string(message)),
            ("status", .string(status.rawValue)), ("createdAt", .string(ISO8601.format(createdAt))),
        ]
        if let handledAt { fields.append(("handledAt", .string(ISO8601.format(handledAt)))) }
        if let operatorId { fields.append(("operatorId", .string(operatorId))) }
        return .object(JSONObject(fields))
    }
}

/// What anyone of the app sees of a group they may join (search results).
public struct PublicGroup: Sendable, Hashable, Encodable {
    public var groupId: String
    public var name: String
    public var avatarKey: String?
    public var introduction: String
    public var memberCount: Int
    public var joinPolicy: GroupJoinPolicy
}

/// `POST /api/im/groups/{id}/join`: joined at once (an open group), or a pending request (approval).
struct JoinResult: Sendable, Encodable {
    var joined: Bool
    var group: GroupInfo?
    var request: GroupJoinRequest?
}

struct JoinRequestPage: Encodable {
    var requests: [GroupJoinRequest]
    var hasMore: Bool
}

struct PublicGroupPage: Encodable {
    var groups: [PublicGroup]
    var hasMore: Bool
}

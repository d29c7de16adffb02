import Foundation
import ParleyAuth
import ParleyJSON

/// One entry of the caller's friend list: the friend's public profile and the caller's own remark for them.
public struct Friend: Sendable, Hashable, Encodable {
    public var userId: String
    /// The caller's name for this friend ("" when unset).
    public var remark: String
    /// When they became friends.
    public var createdAt: Date
    public var user: PublicProfile
}

/// A page of the friend list, or of its changes since a cursor.
public struct FriendPage: Sendable, Encodable {
    public var friends: [Friend]
    /// Users who stopped being friends after `since` (empty without `since`).
    public var removed: [String]
    /// Ask with `since` = this for the next page, and keep it for the next incremental sync.
    public var cursor: String
    public var hasMore: Bool
}

public enum FriendRequestStatus: String, Sendable, Hashable, Encodable {
    case pending, accepted, rejected, withdrawn
}

/// A friend request as its two users see it; `user` is the other side's public profile (the sender's for the
/// recipient, the recipient's for the sender).
public struct FriendRequest: Sendable, Hashable, Encodable {
    /// Decimal string of the 64-bit id.
    public var id: String
    public var fromId: String
    public var toId: String
    public var message: String
    public var status: FriendRequestStatus
    public var createdAt: Date
    public var handledAt: Date?
    public var user: PublicProfile?

    enum CodingKeys: String, CodingKey {
        case id, fromId, toId, message, status, createdAt, handledAt, user
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(fromId, forKey: .fromId)
        try container.encode(toId, forKey: .toId)
        try container.encode(message, forKey: .message)
        try container.encode(status, forKey: .status)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(handledAt, forKey: .handledAt) // explicit nulls: clients see every field
        try container.encode(user, forKey: .user)
    }

    /// The same request as the other side sees it.
    func viewed(with profile: PublicProfile?) -> FriendRequest {
        var copy = self
        copy.user = profile
        return copy
    }
}

public struct FriendRequestPage: Sendable, Encodable {
    public var requests: [FriendRequest]
    /// Pass as `cursor` for the next page; null at the end.
    public var cursor: String?
    public var hasMore: Bool

    enum CodingKeys: String, CodingKey { case requests, cursor, hasMore }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(requests, forKey: .requests)
        try container.encode(cursor, forKey: .cursor) // explicit null at the end
        try container.encode(hasMore, forKey: .hasMore)
    }
}

/// What `POST /api/im/friends/requests` did: a new pending request, or (when the other user had asked first)
/// friendship at once, with `friend` set.
public struct FriendRequestResult: Sendable, Encodable {
    public var request: FriendRequest
    public var friend: Friend?

    enum CodingKeys: String, CodingKey { case request, friend }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(request, forKey: .request)
        try container.encode(friend, forKey: .friend)
    }
}

/// One entry of the caller's block list.
public struct BlockedUser: Sendable, Hashable, Encodable {
    public var userId: String
    public var createdAt: Date
    public var user: PublicProfile
}

public struct BlockPage: Sendable, Encodable {
    public var blocks: [BlockedUser]
    /// Pass as `cursor` for the next page; null at the end.
    public var cursor: String?
    public var hasMore: Bool

    enum CodingKeys: String, CodingKey { case blocks, cursor, hasMore }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(blocks, forKey: .blocks)
        try container.encode(cursor, forKey: .cursor) // explicit null at the end
        try container.encode(hasMore, forKey: .hasMore)
    }
}

extension Encodable {
    /// This model as event data (user events carry a `JSONValue`): the bytes the REST answer would carry.
    func eventData() -> JSONValue {
        guard let bytes = try? JSONCoding.bytesEncoder.encode(self), let value = try? JSONValue.parse(bytes) else {
            return .object(JSONObject())
        }
        return value
    }
}

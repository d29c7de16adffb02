import Foundation
import ParleyHTTP

/// Request and answer bodies of the admin API's messages and groups.

struct AdminRevokeRequest: Decodable {
    var operatorId: String?
}

struct AdminBroadcastAnswer: Encodable {
    var results: [AdminMessageService.BroadcastResult]
    var sent: Int
    var failed: Int
}

struct AdminClearAnswer: Encodable {
    var conversationId: String
    var clearSeq: Int64
    var members: Int
}

struct AdminCreateGroupRequest: Decodable {
    var ownerId: String
    var name: String
    var members: [String]?
    var avatarKey: String?
    var groupId: String?
}

struct AdminTransferRequest: Decodable {
    var ownerId: String
}

/// `until`: epoch milliseconds; absent or null unmutes (the admin and the user mute routes).
struct AdminMuteRequest: Decodable {
    var until: Int64?
}

struct AdminMuteAllRequest: Decodable {
    var muted: Bool
}

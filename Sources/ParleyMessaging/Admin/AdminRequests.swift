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
    var joinPolicy: GroupJoinPolicy?
}

struct AdminTransferRequest: Decodable {
    var ownerId: String
}

/// `until`: epoch milliseconds; absent or null unmutes (the admin and the user mute routes).
struct AdminMuteRequest: Decodable {
    var until: Int64?

    /// The latest time PostgreSQL and the wire both represent (9999-12-31T23:59:59.999Z).
    static let latest: Int64 = 253_402_300_799_999

    /// `until` as a date, or 1002 outside 0 through year 9999.
    func untilDate() throws(APIError) -> Date? {
        guard let until else { return nil }
        guard (0...Self.latest).contains(until) else {
            throw APIError.validationFailed.with(message: "`until` must be epoch milliseconds from 0 to \(Self.latest)")
        }
        return Date(timeIntervalSince1970: Double(until) / 1000)
    }
}

struct AdminMuteAllRequest: Decodable {
    var muted: Bool
}

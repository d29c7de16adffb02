import Foundation
import ParleyJSON

public struct GroupInfo: Sendable, Hashable, Encodable {
    public var groupId: String
    public var conversationId: String
    public var name: String
    public var avatarKey: String?
    public var ownerId: String
    public var memberCount: Int
    public var dissolved: Bool
    public var createdAt: Date
    /// Only the owner and admins may post (mute all).
    public var mutedAll: Bool
    /// "" when unset.
    public var announcement: String
    /// "" when unset.
    public var introduction: String
    /// The app's own data (a JSON object), nil when unset.
    public var ex: JSONValue?
    public var joinPolicy: GroupJoinPolicy
}

public struct GroupMember: Sendable, Hashable, Encodable {
    public var userId: String
    public var role: GroupRole
    public var blocked: Bool
    public var nickname: String
    public var faceURL: String?
    public var joinedAt: Date
    /// Muted in the group until then (nil: not muted; a time past means no longer muted).
    public var mutedUntil: Date?
}

/// Where a page of a group's member list ends: the last member's place in the list's order (role rank, joining
/// time in microseconds, user id), as `<rank>.<microseconds>.<userId>` (a user id may hold `.`, so it comes last and
/// takes the rest).
struct MemberCursor: Sendable, Hashable, CustomStringConvertible {
    var rank: Int
    var joinedMicroseconds: Int64
    var userId: String

    var description: String { "\(rank).\(joinedMicroseconds).\(userId)" }

    init(rank: Int, joinedMicroseconds: Int64, userId: String) {
        self.rank = rank
        self.joinedMicroseconds = joinedMicroseconds
        self.userId = userId
    }

    /// PostgreSQL's timestamps of years 1 through 9999, in microseconds since 1970: a time outside them is
    /// clamped (no member joined then, so the page is the same) rather than overflowing the timestamp.
    static let microsecondRange: ClosedRange<Int64> = -62_135_596_800_000_000...253_402_300_799_999_999

    /// nil for anything `description` never writes.
    init?(_ text: Substring) {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let digits = parts[1].first == "-" ? parts[1].dropFirst() : parts[1]
        guard parts[0].count == 1, let rank = Int(parts[0]), (0...2).contains(rank),
            digits.count <= 18, MessagingInput.isDecimal(digits), let micros = Int64(parts[1]),
            MessagingInput.isIdentifier(parts[2])
        else { return nil }
        let clamped = min(max(micros, Self.microsecondRange.lowerBound), Self.microsecondRange.upperBound)
        self.init(rank: rank, joinedMicroseconds: clamped, userId: String(parts[2]))
    }
}

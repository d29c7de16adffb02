import Foundation
import ParleyHTTP
import ParleyJSON

/// What a report is about.
public enum ReportTargetType: String, Sendable, Hashable, Codable {
    case user, message, group
}

/// A stored report: what `POST /api/im/reports` answers and `parley app reports` lists.
public struct Report: Sendable, Hashable, Encodable {
    /// Decimal string of the 64-bit id, like message ids.
    public var id: String
    public var reporterId: String
    public var targetType: ReportTargetType
    public var targetId: String
    public var reason: String
    public var note: String?
    /// The reported message as its conversation's members saw it when it was reported (message reports only).
    public var message: JSONValue?
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, reporterId, targetType, targetId, reason, note, message, createdAt
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(reporterId, forKey: .reporterId)
        try container.encode(targetType, forKey: .targetType)
        try container.encode(targetId, forKey: .targetId)
        try container.encode(reason, forKey: .reason)
        try container.encode(note, forKey: .note) // explicit nulls: clients see every field
        try container.encode(message, forKey: .message)
        try container.encode(createdAt, forKey: .createdAt)
    }
}

/// `POST /api/im/reports`.
struct ReportRequest: Decodable {
    var targetType: String
    var targetId: String
    var reason: String
    var note: String?
}

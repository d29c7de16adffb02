import Foundation

/// One push the worker sent to a vendor and what the vendor answered (`push_attempts`, migrations/0028), as the
/// admin API's troubleshooting route shows it.
public struct PushAttempt: Sendable, Equatable {
    /// How an attempt ended, as `PushOutcome` says without its reason.
    public enum Outcome: String, Sendable, Equatable, Encodable {
        case delivered
        case invalidToken = "invalid_token"
        case retry
        case rejected
    }

    public var appId: Int64
    public var userId: String
    /// nil for pushes about no single message.
    public var messageId: Int64?
    public var vendor: PushVendor
    /// The last `suffixLength` characters of the token: enough to tell a user's devices apart, useless to push with.
    public var tokenSuffix: String
    /// `alert`, `voip`, ... (`PushNotification.Kind`).
    public var kind: String
    /// The vendor's HTTP status; nil when no answer came.
    public var status: Int?
    /// The vendor's reason, or the transport error.
    public var reason: String?
    /// The vendor's id of the notification (APNs' `apns-id`).
    public var vendorId: String?
    public var outcome: Outcome
    /// When it was recorded (set by the database).
    public var at: Date?

    /// Kept per user; older attempts are deleted by the table's trigger.
    public static let keptPerUser = 50
    public static let suffixLength = 8

    public init(
        appId: Int64, userId: String, messageId: Int64?, vendor: PushVendor, token: String, kind: String,
        answer: PushAnswer
    ) {
        self.appId = appId
        self.userId = userId
        self.messageId = messageId
        self.vendor = vendor
        tokenSuffix = String(token.suffix(Self.suffixLength))
        self.kind = kind
        status = answer.status
        vendorId = answer.vendorId
        switch answer.outcome {
        case .delivered: (outcome, reason) = (.delivered, nil)
        case .invalidToken(let why): (outcome, reason) = (.invalidToken, why)
        case .retry(let why): (outcome, reason) = (.retry, why)
        case .rejected(let why): (outcome, reason) = (.rejected, why)
        }
    }

    init(
        appId: Int64, userId: String, messageId: Int64?, vendor: PushVendor, tokenSuffix: String, kind: String,
        status: Int?, reason: String?, vendorId: String?, outcome: Outcome, at: Date?
    ) {
        self.appId = appId
        self.userId = userId
        self.messageId = messageId
        self.vendor = vendor
        self.tokenSuffix = tokenSuffix
        self.kind = kind
        self.status = status
        self.reason = reason
        self.vendorId = vendorId
        self.outcome = outcome
        self.at = at
    }
}

extension PushAttempt: Encodable {
    enum CodingKeys: String, CodingKey {
        case messageId, vendor, tokenSuffix, kind, status, reason, vendorId, outcome, at
    }

    /// Every field present (null when unknown); message ids as strings, as everywhere in the API.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(messageId.map(String.init), forKey: .messageId)
        try container.encode(vendor, forKey: .vendor)
        try container.encode(tokenSuffix, forKey: .tokenSuffix)
        try container.encode(kind, forKey: .kind)
        try container.encode(status, forKey: .status)
        try container.encode(reason, forKey: .reason)
        try container.encode(vendorId, forKey: .vendorId)
        try container.encode(outcome, forKey: .outcome)
        try container.encode(at, forKey: .at)
    }
}

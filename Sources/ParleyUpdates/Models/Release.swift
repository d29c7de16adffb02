import Foundation

/// One published build of an app for a platform and channel, as the admin routes show it: the draft it was published
/// from (its fields read as `release.versionCode`, ...) and what storing it added.
@dynamicMemberLookup
public struct Release: Sendable, Hashable, Codable {
    public var id: Int64
    /// The owning app; not part of the JSON (a caller only ever sees its own app's releases).
    public var appId: Int64
    /// Platform ("" is the default channel), version, notes, URLs, minimum supported version, rollout.
    public var published: ReleaseDraft
    public var publishedAt: Date
    public var withdrawnAt: Date?
    public var updatedAt: Date

    public subscript<Field>(dynamicMember field: WritableKeyPath<ReleaseDraft, Field>) -> Field {
        get { published[keyPath: field] }
        set { published[keyPath: field] = newValue }
    }

    public var isWithdrawn: Bool { withdrawnAt != nil }

    enum CodingKeys: String, CodingKey {
        case id, platform, channel, versionCode, versionName, releaseNotes, appStoreUrl, downloadUrl,
            minSupportedVersionCode, rolloutPercent, publishedAt, withdrawnAt, updatedAt
    }

    public init(
        id: Int64, appId: Int64, platform: String, channel: String, versionCode: Int64, versionName: String,
        releaseNotes: String, appStoreUrl: String?, downloadUrl: String?, minSupportedVersionCode: Int64?,
        rolloutPercent: Int, publishedAt: Date, withdrawnAt: Date? = nil, updatedAt: Date
    ) {
        self.id = id
        self.appId = appId
        published = ReleaseDraft(
            stored: platform, channel: channel, versionCode: versionCode, versionName: versionName,
            releaseNotes: releaseNotes, appStoreUrl: appStoreUrl, downloadUrl: downloadUrl,
            minSupportedVersionCode: minSupportedVersionCode, rolloutPercent: rolloutPercent)
        self.publishedAt = publishedAt
        self.withdrawnAt = withdrawnAt
        self.updatedAt = updatedAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(Int64.self, forKey: .id), appId: 0,
            platform: try container.decode(String.self, forKey: .platform),
            channel: try container.decode(String.self, forKey: .channel),
            versionCode: try container.decode(Int64.self, forKey: .versionCode),
            versionName: try container.decode(String.self, forKey: .versionName),
            releaseNotes: try container.decode(String.self, forKey: .releaseNotes),
            appStoreUrl: try container.decodeIfPresent(String.self, forKey: .appStoreUrl),
            downloadUrl: try container.decodeIfPresent(String.self, forKey: .downloadUrl),
            minSupportedVersionCode: try container.decodeIfPresent(Int64.self, forKey: .minSupportedVersionCode),
            rolloutPercent: try container.decode(Int.self, forKey: .rolloutPercent),
            publishedAt: try container.decode(Date.self, forKey: .publishedAt),
            withdrawnAt: try container.decodeIfPresent(Date.self, forKey: .withdrawnAt),
            updatedAt: try container.decode(Date.self, forKey: .updatedAt))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(published.platform, forKey: .platform)
        try container.encode(published.channel, forKey: .channel)
        try container.encode(published.versionCode, forKey: .versionCode)
        try container.encode(published.versionName, forKey: .versionName)
        try container.encode(published.releaseNotes, forKey: .releaseNotes)
        // Explicit nulls: clients see every field.
        try container.encode(published.appStoreUrl, forKey: .appStoreUrl)
        try container.encode(published.downloadUrl, forKey: .downloadUrl)
        try container.encode(published.minSupportedVersionCode, forKey: .minSupportedVersionCode)
        try container.encode(published.rolloutPercent, forKey: .rolloutPercent)
        try container.encode(publishedAt, forKey: .publishedAt)
        try container.encode(withdrawnAt, forKey: .withdrawnAt)
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}

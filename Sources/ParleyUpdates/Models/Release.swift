import Foundation

/// One published build of an app for a platform and channel, as the admin routes show it.
public struct Release: Sendable, Hashable, Codable {
    public var id: Int64
    /// The owning app; not part of the JSON (a caller only ever sees its own app's releases).
    public var appId: Int64
    public var platform: String
    /// "" is the default channel.
    public var channel: String
    public var versionCode: Int64
    public var versionName: String
    public var releaseNotes: String
    public var appStoreUrl: String?
    public var downloadUrl: String?
    public var minSupportedVersionCode: Int64?
    public var rolloutPercent: Int
    public var publishedAt: Date
    public var withdrawnAt: Date?
    public var updatedAt: Date

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
        self.platform = platform
        self.channel = channel
        self.versionCode = versionCode
        self.versionName = versionName
        self.releaseNotes = releaseNotes
        self.appStoreUrl = appStoreUrl
        self.downloadUrl = downloadUrl
        self.minSupportedVersionCode = minSupportedVersionCode
        self.rolloutPercent = rolloutPercent
        self.publishedAt = publishedAt
        self.withdrawnAt = withdrawnAt
        self.updatedAt = updatedAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        appId = 0
        platform = try container.decode(String.self, forKey: .platform)
        channel = try container.decode(String.self, forKey: .channel)
        versionCode = try container.decode(Int64.self, forKey: .versionCode)
        versionName = try container.decode(String.self, forKey: .versionName)
        releaseNotes = try container.decode(String.self, forKey: .releaseNotes)
        appStoreUrl = try container.decodeIfPresent(String.self, forKey: .appStoreUrl)
        downloadUrl = try container.decodeIfPresent(String.self, forKey: .downloadUrl)
        minSupportedVersionCode = try container.decodeIfPresent(Int64.self, forKey: .minSupportedVersionCode)
        rolloutPercent = try container.decode(Int.self, forKey: .rolloutPercent)
        publishedAt = try container.decode(Date.self, forKey: .publishedAt)
        withdrawnAt = try container.decodeIfPresent(Date.self, forKey: .withdrawnAt)
        updatedAt = try container.decode(Date.self, forKey: .updatedAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(platform, forKey: .platform)
        try container.encode(channel, forKey: .channel)
        try container.encode(versionCode, forKey: .versionCode)
        try container.encode(versionName, forKey: .versionName)
        try container.encode(releaseNotes, forKey: .releaseNotes)
        // Explicit nulls: clients see every field.
        try container.encode(appStoreUrl, forKey: .appStoreUrl)
        try container.encode(downloadUrl, forKey: .downloadUrl)
        try container.encode(minSupportedVersionCode, forKey: .minSupportedVersionCode)
        try container.encode(rolloutPercent, forKey: .rolloutPercent)
        try container.encode(publishedAt, forKey: .publishedAt)
        try container.encode(withdrawnAt, forKey: .withdrawnAt)
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}

import ParleyHTTP

/// `POST /api/admin/releases`.
struct PublishReleaseRequest: Decodable {
    var platform: String
    var channel: String?
    var versionCode: Int64
    var versionName: String
    var releaseNotes: String?
    var appStoreUrl: String?
    var downloadUrl: String?
    var minSupportedVersionCode: Int64?
    var rolloutPercent: Int?

    func draft() throws(APIError) -> ReleaseDraft {
        try ReleaseDraft(
            platform: platform, channel: channel, versionCode: versionCode, versionName: versionName,
            releaseNotes: releaseNotes, appStoreUrl: appStoreUrl, downloadUrl: downloadUrl,
            minSupportedVersionCode: minSupportedVersionCode, rolloutPercent: rolloutPercent)
    }
}

/// `PATCH /api/admin/releases/{id}`: absent fields stay; `null` clears a URL or the minimum.
struct UpdateReleaseRequest: Decodable {
    var releaseNotes: String?
    var appStoreUrl: String??
    var downloadUrl: String??
    var minSupportedVersionCode: Int64??
    var rolloutPercent: Int?

    enum CodingKeys: String, CodingKey {
        case releaseNotes, appStoreUrl, downloadUrl, minSupportedVersionCode, rolloutPercent
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        releaseNotes = try container.decodeIfPresent(String.self, forKey: .releaseNotes)
        appStoreUrl = try container.decodeNullable(String.self, forKey: .appStoreUrl)
        downloadUrl = try container.decodeNullable(String.self, forKey: .downloadUrl)
        minSupportedVersionCode = try container.decodeNullable(Int64.self, forKey: .minSupportedVersionCode)
        rolloutPercent = try container.decodeIfPresent(Int.self, forKey: .rolloutPercent)
    }

    func changes() throws(APIError) -> ReleaseChanges {
        let changes = try ReleaseChanges(
            releaseNotes: releaseNotes, appStoreUrl: appStoreUrl, downloadUrl: downloadUrl,
            minSupportedVersionCode: minSupportedVersionCode, rolloutPercent: rolloutPercent)
        guard !changes.isEmpty else {
            throw APIError.validationFailed.with(
                message:
                    "nothing to change: give releaseNotes, appStoreUrl, downloadUrl, minSupportedVersionCode or rolloutPercent"
            )
        }
        return changes
    }
}

/// `GET /api/admin/releases`'s `data`.
struct ReleasePage: Encodable {
    var releases: [Release]
    var hasMore: Bool
}

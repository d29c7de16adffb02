import ParleyHTTP

/// A validated release to publish (from `POST /api/admin/releases` or `parley release publish`).
public struct ReleaseDraft: Sendable, Hashable {
    public var platform: String
    public var channel: String
    public var versionCode: Int64
    public var versionName: String
    public var releaseNotes: String
    public var appStoreUrl: String?
    public var downloadUrl: String?
    public var minSupportedVersionCode: Int64?
    public var rolloutPercent: Int

    /// Validates every field (1002 naming the first bad one) and normalizes platform and channel to lower case.
    public init(
        platform: String, channel: String? = nil, versionCode: Int64, versionName: String,
        releaseNotes: String? = nil, appStoreUrl: String? = nil, downloadUrl: String? = nil,
        minSupportedVersionCode: Int64? = nil, rolloutPercent: Int? = nil
    ) throws(APIError) {
        self.platform = try ReleaseInput.platform(platform)
        self.channel = try ReleaseInput.channel(channel)
        self.versionCode = try ReleaseInput.versionCode(versionCode, field: "versionCode")
        self.versionName = try ReleaseInput.versionName(versionName)
        self.releaseNotes = try ReleaseInput.releaseNotes(releaseNotes ?? "")
        self.appStoreUrl = try appStoreUrl.map { url throws(APIError) in try ReleaseInput.url(url, field: "appStoreUrl")
        }
        self.downloadUrl = try downloadUrl.map { url throws(APIError) in try ReleaseInput.url(url, field: "downloadUrl")
        }
        guard self.appStoreUrl != nil || self.downloadUrl != nil else {
            throw APIError.validationFailed.with(message: "give `appStoreUrl` or `downloadUrl` (or both)")
        }
        try ReleaseInput.requireAppStoreURL(platform: self.platform, self.appStoreUrl)
        self.minSupportedVersionCode = try minSupportedVersionCode.map { code throws(APIError) in
            try ReleaseInput.minSupported(code, versionCode: versionCode)
        }
        self.rolloutPercent = try ReleaseInput.rolloutPercent(rolloutPercent ?? 100)
    }

    /// A release as stored (published earlier, so already checked): no checks again.
    init(
        stored platform: String, channel: String, versionCode: Int64, versionName: String, releaseNotes: String,
        appStoreUrl: String?, downloadUrl: String?, minSupportedVersionCode: Int64?, rolloutPercent: Int
    ) {
        self.platform = platform
        self.channel = channel
        self.versionCode = versionCode
        self.versionName = versionName
        self.releaseNotes = releaseNotes
        self.appStoreUrl = appStoreUrl
        self.downloadUrl = downloadUrl
        self.minSupportedVersionCode = minSupportedVersionCode
        self.rolloutPercent = rolloutPercent
    }
}

/// Changes to a published release (`PATCH /api/admin/releases/{id}`, `parley release update`). nil leaves a field
/// as it is; for the nullable fields `.some(nil)` clears it. Checked against the release in `ReleaseService`.
public struct ReleaseChanges: Sendable, Hashable {
    public var releaseNotes: String?
    public var appStoreUrl: String??
    public var downloadUrl: String??
    public var minSupportedVersionCode: Int64??
    public var rolloutPercent: Int?

    public init(
        releaseNotes: String? = nil, appStoreUrl: String?? = nil, downloadUrl: String?? = nil,
        minSupportedVersionCode: Int64?? = nil, rolloutPercent: Int? = nil
    ) throws(APIError) {
        self.releaseNotes = try releaseNotes.map { notes throws(APIError) in try ReleaseInput.releaseNotes(notes) }
        self.appStoreUrl = try Self.url(appStoreUrl, field: "appStoreUrl")
        self.downloadUrl = try Self.url(downloadUrl, field: "downloadUrl")
        if case .some(.some(let code)) = minSupportedVersionCode {
            _ = try ReleaseInput.versionCode(code, field: "minSupportedVersionCode")
        }
        self.minSupportedVersionCode = minSupportedVersionCode
        self.rolloutPercent = try rolloutPercent.map { percent throws(APIError) in
            try ReleaseInput.rolloutPercent(percent)
        }
    }

    private static func url(_ value: String??, field: String) throws(APIError) -> String?? {
        guard case .some(.some(let url)) = value else { return value }
        return .some(try ReleaseInput.url(url, field: field))
    }

    public var isEmpty: Bool {
        releaseNotes == nil && appStoreUrl == nil && downloadUrl == nil && minSupportedVersionCode == nil
            && rolloutPercent == nil
    }

    /// `release` with the changes applied, validated as a whole (a download location left, the minimum not
    /// above the release's own versionCode).
    func applied(to release: Release) throws(APIError) -> Release {
        var changed = release
        if let releaseNotes { changed.releaseNotes = releaseNotes }
        if let appStoreUrl { changed.appStoreUrl = appStoreUrl }
        if let downloadUrl { changed.downloadUrl = downloadUrl }
        if let minSupportedVersionCode {
            changed.minSupportedVersionCode = try minSupportedVersionCode.map { code throws(APIError) in
                try ReleaseInput.minSupported(code, versionCode: release.versionCode)
            }
        }
        if let rolloutPercent { changed.rolloutPercent = rolloutPercent }
        guard changed.appStoreUrl != nil || changed.downloadUrl != nil else {
            throw APIError.validationFailed.with(message: "a release keeps `appStoreUrl` or `downloadUrl` (or both)")
        }
        // An iOS release stored before the rule (see `UpdateInfo`) gets its App Store URL with its first change.
        try ReleaseInput.requireAppStoreURL(platform: changed.platform, changed.appStoreUrl)
        return changed
    }
}

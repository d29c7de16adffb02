/// An app's FCM and HMS settings as `parley app push` stores them (`app_push_vendor_settings`; secrets sealed).
/// Whether the app pushes at all is `PushSettings.enabled`.
public struct PushVendorSettings: Sendable, Equatable {
    public var appId: Int64
    public var fcmProjectId: String?
    /// The service-account JSON file, sealed (`PushKeyBox.sealFCMServiceAccount`).
    public var sealedFCMServiceAccount: [UInt8]?
    /// nil: `FCMCredentials.defaultEndpoint`.
    public var fcmEndpoint: String?
    /// nil: the service account's `token_uri`.
    public var fcmTokenURI: String?
    public var hmsAppId: String?
    /// The HMS client secret, sealed (`PushKeyBox.sealHMSClientSecret`).
    public var sealedHMSClientSecret: [UInt8]?
    /// nil: `HMSCredentials.defaultEndpoint` and `.defaultOAuthEndpoint`.
    public var hmsEndpoint: String?
    public var hmsOAuthEndpoint: String?

    public init(appId: Int64) {
        self.appId = appId
    }

    public var hasFCMCredentials: Bool { fcmProjectId != nil && sealedFCMServiceAccount != nil }
    public var hasHMSCredentials: Bool { hmsAppId != nil && sealedHMSClientSecret != nil }
}

/// What the FCM sender needs of an app: the service account (whose key signs OAuth assertions) and where to send.
public struct FCMCredentials: Sendable {
    public static let defaultEndpoint = "https://fcm.googleapis.com"

    public var appId: Int64
    public var account: FCMServiceAccount
    /// `{endpoint}/v1/projects/{project}/messages:send`, without a trailing slash.
    public var endpoint: String
    /// Where access tokens are asked for: the account's `token_uri` unless overridden (tests, relays). The
    /// assertion's audience stays the account's `token_uri` either way, as Google checks it.
    public var tokenURI: String

    public init(appId: Int64, account: FCMServiceAccount, endpoint: String? = nil, tokenURI: String? = nil) {
        self.appId = appId
        self.account = account
        self.endpoint = PushEndpoints.trimmed(endpoint ?? Self.defaultEndpoint)
        self.tokenURI = tokenURI ?? account.tokenURI
    }
}

/// What the HMS sender needs of an app: its OAuth client (the app id and secret) and where to send.
public struct HMSCredentials: Sendable {
    public static let defaultEndpoint = "https://push-api.cloud.huawei.com"
    public static let defaultOAuthEndpoint = "https://oauth-login.cloud.huawei.com"

    public var appId: Int64
    /// The AppGallery Connect app id: the OAuth client id and the path of the send URL.
    public var clientId: String
    public var clientSecret: String
    public var endpoint: String
    public var oauthEndpoint: String

    public init(
        appId: Int64, clientId: String, clientSecret: String, endpoint: String? = nil, oauthEndpoint: String? = nil
    ) {
        self.appId = appId
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.endpoint = PushEndpoints.trimmed(endpoint ?? Self.defaultEndpoint)
        self.oauthEndpoint = PushEndpoints.trimmed(oauthEndpoint ?? Self.defaultOAuthEndpoint)
    }
}

/// Shapes of the vendors' identifiers and URLs, checked by `parley app push`.
public enum PushEndpoints {
    /// An `http://` or `https://` URL without spaces (the overrides of vendors' endpoints).
    public static func isURL(_ value: String) -> Bool {
        (value.hasPrefix("https://") || value.hasPrefix("http://")) && value.utf8.count <= 2048
            && !value.utf8.contains { $0 <= 0x20 || $0 >= 0x7f }
    }

    static func trimmed(_ url: String) -> String { url.hasSuffix("/") ? String(url.dropLast()) : url }

    /// HMS app ids are decimal numbers; a URL path segment needs nothing else.
    public static func isHMSAppID(_ value: String) -> Bool {
        (1...32).contains(value.utf8.count) && value.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}

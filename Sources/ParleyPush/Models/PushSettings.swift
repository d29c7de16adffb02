import ParleyCrypto

/// What an alert reveals of a message.
public enum PushPreview: String, Sendable, Hashable, CaseIterable {
    /// The sender's name as the title, the message's preview as the body.
    case full
    /// The sender's name; the body only says a message arrived.
    case sender
    /// Neither: "You have a new message", no title.
    case none
}

/// An app's push settings as `parley app push` stores them (the key stays sealed).
public struct PushSettings: Sendable, Equatable {
    public var appId: Int64
    public var enabled: Bool
    public var teamId: String?
    public var keyId: String?
    public var sealedKey: [UInt8]?
    public var bundleId: String?
    public var preview: PushPreview
    /// nil: Apple's endpoint for each token's environment.
    public var endpoint: String?

    public init(
        appId: Int64, enabled: Bool = false, teamId: String? = nil, keyId: String? = nil,
        sealedKey: [UInt8]? = nil, bundleId: String? = nil, preview: PushPreview = .full, endpoint: String? = nil
    ) {
        self.appId = appId
        self.enabled = enabled
        self.teamId = teamId
        self.keyId = keyId
        self.sealedKey = sealedKey
        self.bundleId = bundleId
        self.preview = preview
        self.endpoint = endpoint
    }

    /// Whether APNs can be used: team, key id, key and bundle id are all set.
    public var hasAPNsCredentials: Bool {
        teamId != nil && keyId != nil && sealedKey != nil && bundleId != nil
    }
}

/// What the APNs sender needs of an app: the provider-token key and where to send.
public struct APNsCredentials: Sendable {
    public var appId: Int64
    public var teamId: String
    public var keyId: String
    public var key: P256.SigningKey
    /// The default topic (tokens may name their own bundle id).
    public var bundleId: String
    /// nil: Apple's endpoint for the token's environment.
    public var endpoint: String?

    public init(appId: Int64, teamId: String, keyId: String, key: P256.SigningKey, bundleId: String, endpoint: String?)
    {
        self.appId = appId
        self.teamId = teamId
        self.keyId = keyId
        self.key = key
        self.bundleId = bundleId
        self.endpoint = endpoint
    }
}

/// Shapes of Apple's identifiers, checked by the routes and `parley app push`.
public enum APNsIdentifiers {
    /// Bundle ids: alphanumerics, hyphens and periods, at most 155 characters, no leading or trailing period.
    public static func isBundleID(_ value: String) -> Bool {
        (1...155).contains(value.utf8.count) && !value.hasPrefix(".") && !value.hasSuffix(".")
            && value.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            }
    }

    /// Team ids and key ids: 10 upper-case letters and digits.
    public static func isTeamOrKeyID(_ value: String) -> Bool {
        value.utf8.count == 10
            && value.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) }
    }
}

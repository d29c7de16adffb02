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
    /// APNs client certificates (`TLSClientIdentity.pem`, sealed by `PushKeyBox.seal(certificatePEM:)`) per
    /// environment, used for the tokens of an environment when there is no .p8 key.
    public var sealedCertificates: [PushEnvironment: [UInt8]] = [:]

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

    /// Whether APNs can be used: a bundle id, and the .p8 key with its team and key ids or a certificate.
    public var hasAPNsCredentials: Bool {
        bundleId != nil && (hasAPNsTokenKey || !sealedCertificates.isEmpty)
    }

    /// Whether the .p8 key, its key id and team id are all set (token-based authentication).
    public var hasAPNsTokenKey: Bool { teamId != nil && keyId != nil && sealedKey != nil }
}

/// What the APNs sender needs of an app: how it authenticates (a provider-token key, or client certificates per
/// environment) and where to send.
public struct APNsCredentials: Sendable {
    public var appId: Int64
    /// Token-based authentication (the .p8 key); empty ids and a nil key when the app has certificates only.
    public var teamId: String
    public var keyId: String
    public var tokenKey: P256.SigningKey?
    /// Certificate-based authentication per environment, for environments without a .p8 key.
    public var certificates: [PushEnvironment: TLSClientIdentity]
    /// The default topic (tokens may name their own bundle id).
    public var bundleId: String
    /// nil: Apple's endpoint for the token's environment.
    public var endpoint: String?

    public init(appId: Int64, teamId: String, keyId: String, key: P256.SigningKey, bundleId: String, endpoint: String?)
    {
        self.init(
            appId: appId, teamId: teamId, keyId: keyId, tokenKey: key, certificates: [:], bundleId: bundleId,
            endpoint: endpoint)
    }

    public init(
        appId: Int64, teamId: String, keyId: String, tokenKey: P256.SigningKey?,
        certificates: [PushEnvironment: TLSClientIdentity], bundleId: String, endpoint: String?
    ) {
        self.appId = appId
        self.teamId = teamId
        self.keyId = keyId
        self.tokenKey = tokenKey
        self.certificates = certificates
        self.bundleId = bundleId
        self.endpoint = endpoint
    }

    /// How a push to a token of `environment` authenticates: the .p8 key when there is one (it serves both
    /// environments, and provider tokens need no TLS identity per connection), else that environment's certificate;
    /// nil when the app has neither for it.
    public func authentication(for environment: PushEnvironment) -> APNsAuthentication? {
        if let tokenKey { return .token(teamId: teamId, keyId: keyId, key: tokenKey) }
        return certificates[environment].map(APNsAuthentication.certificate)
    }
}

/// One of APNs' two ways to authenticate a provider.
public enum APNsAuthentication: Sendable {
    /// `authorization: bearer <ES256 JWT>` signed with the .p8 key.
    case token(teamId: String, keyId: String, key: P256.SigningKey)
    /// A TLS client certificate; requests carry no `authorization` header.
    case certificate(TLSClientIdentity)
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

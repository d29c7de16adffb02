/// Who delivers a token's pushes: Apple (APNs), Google (FCM HTTP v1) or Huawei (HMS Push Kit), each with the
/// app's own credentials for it.
public enum PushVendor: String, Sendable, Hashable, CaseIterable, Codable {
    /// APNs alert pushes (`apns-push-type: alert`).
    case apns
    /// APNs VoIP pushes (PushKit, `apns-push-type: voip`, topic `<bundle>.voip`): incoming calls.
    case apnsVoip = "apns_voip"
    case fcm
    case hms

    public var isAPNs: Bool { self == .apns || self == .apnsVoip }

    /// A request's vendor: its name in lower case, or all in upper case (seed 001's SDK sends "vendor 固定为 APNS").
    public init?(requestName name: String) {
        guard let vendor = Self(rawValue: name) ?? Self.allCases.first(where: { $0.rawValue.uppercased() == name })
        else { return nil }
        self = vendor
    }

    /// The token as stored, or nil when it cannot be one of this vendor's tokens. APNs tokens are hex (32 bytes
    /// today; Apple reserves the right to lengthen them, so 32 to 100 bytes), stored lower-cased; FCM and HMS tokens
    /// are opaque printable ASCII without spaces or slashes (they travel in a URL path to unbind).
    public func normalize(_ token: String) -> String? {
        switch self {
        case .apns, .apnsVoip:
            let lowered = token.lowercased()
            guard (64...200).contains(lowered.utf8.count), lowered.utf8.count % 2 == 0,
                lowered.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
            else { return nil }
            return lowered
        case .fcm, .hms:
            guard (16...4096).contains(token.utf8.count),
                token.utf8.allSatisfy({ byte in
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                        || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
                        || byte == UInt8(ascii: ".")
                })
            else { return nil }
            return token
        }
    }
}

/// Which APNs environment issued a token: development builds get sandbox tokens, App Store and TestFlight builds
/// production ones; each is only valid at its own endpoint.
public enum PushEnvironment: String, Sendable, Hashable, CaseIterable, Codable {
    case sandbox, production

    /// Apple's endpoint for this environment.
    public var apnsEndpoint: String {
        switch self {
        case .sandbox: "https://api.sandbox.push.apple.com"
        case .production: "https://api.push.apple.com"
        }
    }
}

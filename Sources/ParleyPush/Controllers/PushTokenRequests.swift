import ParleyHTTP

/// `POST /api/push/tokens`.
struct BindTokenRequest: Decodable {
    var token: String
    var vendor: String
    var deviceId: String?
    var bundleId: String?
    var environment: String?
}

/// `POST /user/device/push-token` as the OpenIM-based client sends it.
struct LegacyBindRequest: Decodable {
    /// The app's own id for the user; recorded, never used to choose the owner (the caller).
    var uid: String
    var token: String
    /// "apns" (default), "voip"/"apns_voip", "fcm", "hms".
    var type: String?
    var deviceId: String?
    var bundleId: String?
    var environment: String?
}

/// `POST /user/device/push-token/unbind`: without a token, every token of the calling session.
struct LegacyUnbindRequest: Decodable {
    var uid: String?
    var token: String?
    var type: String?
}

/// The answer to a bind.
struct BoundToken: Encodable {
    var token: String
    var vendor: String
    var deviceId: String
    var bundleId: String
    var environment: String
}

struct UnbindResult: Encodable {
    var removed: Int
}

/// Checks of the bind fields (1002 with the field named).
enum PushTokenInput {
    /// An APNs token names its app's bundle id (or `<bundle id>.voip`, PushKit's topic) when it names one: a token
    /// of another app would be pushed under this app's key and identity.
    static func requireAppBundle(_ binding: PushTokenRepository.Binding, configured: String) throws(APIError) {
        guard binding.vendor == .apns || binding.vendor == .apnsVoip, !binding.bundleId.isEmpty else { return }
        guard binding.bundleId == configured || binding.bundleId == configured + ".voip" else {
            throw APIError.validationFailed.with(
                message: "bundleId must be this app's bundle id (\(configured)) or \(configured).voip")
        }
    }

    static func binding(
        token: String, vendor rawVendor: String, deviceId: String?, bundleId: String?,
        environment: String?
    ) throws(APIError) -> PushTokenRepository.Binding {
        guard let vendor = PushVendor(requestName: rawVendor) else {
            throw APIError.validationFailed.with(
                message: "vendor must be one of "
                    + PushVendor.allCases.map(\.rawValue).joined(separator: ", "))
        }
        guard let normalized = vendor.normalize(token) else {
            throw APIError.validationFailed.with(
                message: vendor.isAPNs
                    ? "token must be an APNs device token: 64 to 200 hex digits"
                    : "token must be 16 to 4096 characters of A-Z, a-z, 0-9, '-', '_', ':' or '.'")
        }
        let device = deviceId ?? ""
        guard device.utf8.count <= 128,
            !device.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw APIError.validationFailed.with(
                message: "deviceId must be at most 128 characters, no control characters")
        }
        let bundle = bundleId ?? ""
        guard bundle.isEmpty || APNsIdentifiers.isBundleID(bundle) else {
            throw APIError.validationFailed.with(
                message: "bundleId must be a reverse-DNS bundle identifier (A-Z, a-z, 0-9, '-', '.')")
        }
        var env = PushEnvironment.production
        if let environment {
            guard let parsed = PushEnvironment(rawValue: environment) else {
                throw APIError.validationFailed.with(message: "environment must be sandbox or production")
            }
            env = parsed
        }
        return PushTokenRepository.Binding(
            vendor: vendor, token: normalized, deviceId: device, bundleId: bundle,
            environment: env)
    }

    /// The legacy route's `uid`: 1-128 characters without control characters.
    static func appUID(_ uid: String) throws(APIError) -> String {
        guard !uid.isEmpty, uid.unicodeScalars.count <= 128,
            !uid.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw APIError.validationFailed.with(message: "uid must be 1 to 128 characters, no control characters")
        }
        return uid
    }

    /// The legacy `type` field: "apns" by default; "voip" is the PushKit token.
    static func legacyVendor(_ type: String?) throws(APIError) -> PushVendor {
        switch type ?? "apns" {
        case "apns", "ios": return .apns
        case "voip", "apns_voip": return .apnsVoip
        case "fcm": return .fcm
        case "hms": return .hms
        default: throw APIError.validationFailed.with(message: "type must be one of apns, voip, fcm, hms")
        }
    }

    /// A token in a URL path or an unbind body: within the longest any vendor issues, printable.
    static func lookupToken(_ token: String) throws(APIError) -> String {
        guard (1...4096).contains(token.utf8.count), token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw APIError.validationFailed.with(message: "token must be 1 to 4096 printable ASCII characters")
        }
        return token
    }
}

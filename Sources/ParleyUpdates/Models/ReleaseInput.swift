import ParleyHTTP

/// Input rules of releases and update checks, each answering 1002 with the field named.
public enum ReleaseInput {
    public static let maxVersionNameCharacters = 64
    public static let maxReleaseNotesCharacters = 10_000
    public static let maxURLBytes = 2048

    /// 1-32 of `[a-z0-9_-]` after lower-casing (`ios`, `android`, `web`, ...), the same rule as a session's platform.
    public static func platform(_ raw: String) throws(APIError) -> String {
        guard let platform = normalized(raw, maxBytes: 32, allowDot: false), !platform.isEmpty else {
            throw APIError.validationFailed.with(message: "`platform` must be 1-32 of [a-z0-9_-] (ios, android, ...)")
        }
        return platform
    }

    /// 0-32 of `[a-z0-9_.-]` after lower-casing; nil and "" are the default channel.
    public static func channel(_ raw: String?) throws(APIError) -> String {
        guard let raw else { return "" }
        guard let channel = normalized(raw, maxBytes: 32, allowDot: true) else {
            throw APIError.validationFailed.with(message: "`channel` must be 0-32 of [a-z0-9_.-] (beta, internal, ...)")
        }
        return channel
    }

    public static func versionCode(_ code: Int64, field: String) throws(APIError) -> Int64 {
        guard code >= 0 else { throw APIError.validationFailed.with(message: "`\(field)` must be 0 or more") }
        return code
    }

    /// A decimal `versionCode` from a query string: 1-18 digits (so it always fits in 64 bits).
    public static func versionCode(query raw: String?) throws(APIError) -> Int64 {
        guard let raw, !raw.isEmpty else {
            throw APIError.validationFailed.with(message: "missing query parameter `versionCode`")
        }
        let bytes = raw.utf8
        guard bytes.count <= 18, bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let code = Int64(raw)
        else {
            throw APIError.validationFailed.with(message: "`versionCode` must be a whole number of at most 18 digits")
        }
        return code
    }

    public static func versionName(_ name: String) throws(APIError) -> String {
        guard !name.isEmpty, name.count <= maxVersionNameCharacters, !hasControlCharacters(name) else {
            throw APIError.validationFailed.with(
                message: "`versionName` must be 1-64 characters without control characters")
        }
        return name
    }

    /// Up to 10,000 characters; line breaks and tabs are fine, other control characters are not.
    public static func releaseNotes(_ notes: String) throws(APIError) -> String {
        let allowed: Set<Unicode.Scalar> = ["\n", "\r", "\t"]
        guard notes.count <= maxReleaseNotesCharacters,
            !notes.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && !allowed.contains($0) }
            )
        else {
            throw APIError.validationFailed.with(
                message:
                    "`releaseNotes` must be at most \(maxReleaseNotesCharacters) characters without control characters")
        }
        return notes
    }

    /// The schemes an update may send a user to: `https`, and the store apps' own (`itms-apps`, `itms-appss`,
    /// `itms-services` for enterprise manifests, `market`). Clients open these URLs as they come: no cleartext
    /// `http` (a network can swap the download) and no `javascript:`, `data:`, `file:` or `intent:`.
    public static let urlSchemes: Set<String> = ["https", "itms-apps", "itms-appss", "itms-services", "market"]

    /// An absolute URL of at most 2048 bytes with one of `urlSchemes` (any case), no spaces or control characters.
    public static func url(_ url: String, field: String) throws(APIError) -> String {
        let bytes = Array(url.utf8)
        let schemeEnd = bytes.firstIndex(of: UInt8(ascii: ":")) ?? 0
        let scheme = String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased()
        guard bytes.count <= maxURLBytes, urlSchemes.contains(scheme), bytes.count > schemeEnd + 1,
            !bytes.contains(where: { $0 <= 0x20 || $0 >= 0x7F })
        else {
            throw APIError.validationFailed.with(
                message:
                    "`\(field)` must be an https (or itms-apps, itms-appss, itms-services, market) URL of at most "
                    + "2048 bytes")
        }
        return url
    }

    /// iOS apps update only through the App Store (or TestFlight, an enterprise manifest: whatever URL the app
    /// opens), and the client SDK decodes `info.appStoreUrl` as a non-optional string: an iOS release needs one.
    public static func requireAppStoreURL(platform: String, _ appStoreUrl: String?) throws(APIError) {
        guard platform != iOSPlatform || appStoreUrl != nil else {
            throw APIError.validationFailed.with(
                message: "an iOS release needs `appStoreUrl` (the URL the app opens to update)")
        }
    }

    /// The platform whose update answers always carry `appStoreUrl`.
    public static let iOSPlatform = "ios"

    /// At most the release's own versionCode (a release cannot demand more than itself to run).
    public static func minSupported(_ code: Int64, versionCode: Int64) throws(APIError) -> Int64 {
        guard code >= 0, code <= versionCode else {
            throw APIError.validationFailed.with(
                message: "`minSupportedVersionCode` must be 0 to the release's versionCode")
        }
        return code
    }

    public static func rolloutPercent(_ percent: Int) throws(APIError) -> Int {
        guard (0...100).contains(percent) else {
            throw APIError.validationFailed.with(message: "`rolloutPercent` must be 0 to 100")
        }
        return percent
    }

    /// A device id for rollout bucketing: 1-128 bytes without control characters.
    public static func deviceID(_ raw: String?) throws(APIError) -> String? {
        guard let raw, !raw.isEmpty else { return nil }
        guard raw.utf8.count <= 128, !raw.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw APIError.validationFailed.with(message: "`deviceId` must be 1-128 bytes without control characters")
        }
        return raw
    }

    /// Lower-cased `raw` when all of it is `[a-z0-9_-]` (and `.` if allowed) within `maxBytes`; nil otherwise.
    /// Allocates only when there are upper-case letters (this runs on every update check).
    static func normalized(_ raw: String, maxBytes: Int, allowDot: Bool) -> String? {
        var hasUpper = false
        var count = 0
        for byte in raw.utf8 {
            count += 1
            if count > maxBytes { return nil }
            if isLower(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") { continue }
            if allowDot && byte == UInt8(ascii: ".") { continue }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") {
                hasUpper = true
                continue
            }
            return nil
        }
        return hasUpper ? raw.lowercased() : raw
    }

    private static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    private static func isLower(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}

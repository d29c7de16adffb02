import Foundation
import ParleyHTTP

/// Request bodies of the auth routes, each with its validation (1002 naming the field).

struct RegisterRequest: Decodable {
    var username: String
    var password: String
    var nickname: String?
    var avatar: String?
    var platform: String?
    var deviceId: String?
    var deviceModel: String?
}

struct LoginRequest: Decodable {
    var username: String
    var password: String
    var platform: String
    var deviceId: String?
    var deviceModel: String?
}

struct RefreshRequest: Decodable {
    var refreshToken: String
}

struct IMLoginRequest: Decodable {
    var appKey: String
    var userId: String
    var platform: String?
    var deviceId: String?
    var deviceModel: String?
    var language: String?
}

struct ConsentRequest: Decodable {
    var version: Int
}

/// `DELETE /api/users/me`: the password of a built-in account (accounts of the app's backend have none).
struct DeleteAccountRequest: Decodable {
    var password: String?
}

struct LookupRequest: Decodable {
    var ids: [String]
}

/// `PATCH /api/users/me`: an absent field is left alone; `"avatar": null` removes the avatar.
struct UpdateProfileRequest: Decodable {
    var nickname: String?
    /// nil: absent; .some(nil): clear; .some(key): set.
    var avatar: String??

    enum CodingKeys: String, CodingKey { case nickname, avatar }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        nickname = try container.decodeIfPresent(String.self, forKey: .nickname)
        avatar = try container.decodeNullable(String.self, forKey: .avatar)
    }
}

enum AuthInput {
    static let maxPasswordBytes = 1024
    static let maxNicknameCharacters = 64
    static let maxAvatarBytes = 512

    static func username(_ raw: String) throws(APIError) -> String {
        guard let name = Validation.normalizedUsername(raw) else {
            throw APIError.validationFailed.with(message: "`username` must be 3-64 of [A-Za-z0-9_.@-]")
        }
        return name
    }

    static func newPassword(_ password: String) throws(APIError) {
        guard password.count >= 8, password.utf8.count <= maxPasswordBytes else {
            throw APIError.validationFailed.with(
                message: "`password` must be at least 8 characters (at most 1024 bytes)")
        }
    }

    /// At most 64 code points as sent (JSON Schema's `maxLength`, what openapi.yaml states), no control
    /// characters, something besides spaces; stored trimmed of spaces.
    static func nickname(_ raw: String?) throws(APIError) -> String? {
        guard let raw else { return nil }
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, raw.unicodeScalars.count <= maxNicknameCharacters,
            Validation.isValidText(raw, maxCharacters: maxNicknameCharacters)
        else {
            throw APIError.validationFailed.with(
                message: "`nickname` must be 1-64 characters without control characters")
        }
        return trimmed
    }

    /// Object keys are printable ASCII (the server issues nothing else).
    static func avatar(_ raw: String?) throws(APIError) -> String? {
        guard let raw else { return nil }
        guard !raw.isEmpty, raw.utf8.count <= maxAvatarBytes, raw.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
        else {
            throw APIError.validationFailed.with(
                message: "`avatar` must be an object key of 1-512 printable ASCII characters")
        }
        return raw
    }

    static func userID(_ raw: String, field: String = "userId") throws(APIError) -> String {
        guard Validation.isValidUserID(raw) else {
            throw APIError.validationFailed.with(message: "`\(field)` must be 1-64 of [A-Za-z0-9_.@-]")
        }
        return raw
    }

    static func device(
        platform: String?, deviceId: String?, deviceModel: String?, ipAddress: String, language: SessionLanguage,
        defaultPlatform: String? = nil
    ) throws(APIError) -> DeviceInfo {
        guard let rawPlatform = platform ?? defaultPlatform else {
            throw APIError.validationFailed.with(message: "missing field `platform`")
        }
        guard let platform = Validation.normalizedPlatform(rawPlatform) else {
            throw APIError.validationFailed.with(
                message: "`platform` must be 1-32 of [a-z0-9_-] (ios, android, web, ...)")
        }
        let deviceId = deviceId ?? ""
        guard deviceId.utf8.count <= 128, Validation.isValidText(deviceId, maxCharacters: 128) else {
            throw APIError.validationFailed.with(message: "`deviceId` must be at most 128 bytes")
        }
        let deviceModel = deviceModel ?? ""
        guard Validation.isValidText(deviceModel, maxCharacters: 128) else {
            throw APIError.validationFailed.with(message: "`deviceModel` must be at most 128 characters")
        }
        return DeviceInfo(
            platform: platform, deviceId: deviceId, deviceModel: deviceModel, ipAddress: ipAddress, language: language)
    }

    /// The signed login's `language` (a language tag such as `zh-CN`: the app's backend speaks for the device), else
    /// the request's `Accept-Language`.
    static func language(_ tag: String?, of request: HTTPRequest) throws(APIError) -> SessionLanguage {
        guard let tag else { return SessionLanguage(acceptLanguage: request.headers["accept-language"]) }
        guard tag.utf8.count <= 35, let language = SessionLanguage(languageRange: tag) else {
            throw APIError.validationFailed.with(message: "`language` must be a language tag starting zh or en")
        }
        return language
    }
}

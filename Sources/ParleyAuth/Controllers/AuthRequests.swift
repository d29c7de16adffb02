import Foundation
import ParleyHTTP
import ParleyJSON

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

/// `PATCH /api/users/me`, validated: an absent field is left alone (so is a null `nickname`, `signature` or
/// `searchable`); `"avatar": null` and `"ex": null` clear them. Read with ParleyJSON so that `ex` is kept as the app
/// sent it (member order, numbers' text).
struct ProfileUpdate: Sendable {
    var nickname: String?
    /// nil: absent; .some(nil): clear; .some(key): set (the client's key until the avatar check replaces it).
    var avatar: String??
    var signature: String?
    /// nil: absent; .some(nil): clear; .some(value): set.
    var ex: JSONValue??
    var searchable: Bool?

    init(
        nickname: String? = nil, avatar: String?? = nil, signature: String? = nil, ex: JSONValue?? = nil,
        searchable: Bool? = nil
    ) {
        self.nickname = nickname
        self.avatar = avatar
        self.signature = signature
        self.ex = ex
        self.searchable = searchable
    }

    /// Every field checked before anything is stored (1001 for a body that is not JSON, 1002 naming the field).
    init(body bytes: [UInt8]) throws(APIError) {
        guard case .object(let body) = try AuthInput.jsonBody(bytes) else {
            throw APIError.validationFailed.with(message: "request body must be a JSON object")
        }
        try self.init(fields: body)
    }

    /// The profile fields of `body` (other members are ignored): a request body, or one user of an admin import.
    init(fields body: JSONObject) throws(APIError) {
        self.init()
        switch body["nickname"] {
        case nil, .null?: break
        case .string(let raw)?: nickname = try AuthInput.nickname(raw)
        default: throw APIError.validationFailed.with(message: "`nickname` must be a string or null")
        }
        switch body["avatar"] {
        case nil: break
        case .null?: avatar = .some(nil)
        case .string(let raw)?: avatar = .some(try AuthInput.avatar(raw))
        default: throw APIError.validationFailed.with(message: "`avatar` must be an object key or null")
        }
        switch body["signature"] {
        case nil, .null?: break
        case .string(let raw)?: signature = try AuthInput.signature(raw)
        default: throw APIError.validationFailed.with(message: "`signature` must be a string or null")
        }
        switch body["ex"] {
        case nil: break
        case .null?: ex = .some(nil)
        case let value?: ex = .some(try AuthInput.ex(value))
        }
        switch body["searchable"] {
        case nil, .null?: break
        case .bool(let value)?: searchable = value
        default: throw APIError.validationFailed.with(message: "`searchable` must be true, false or null")
        }
    }
}

enum AuthInput {
    static let maxPasswordBytes = 1024
    static let maxNicknameCharacters = 64
    static let maxAvatarBytes = 512
    static let maxSignatureCharacters = 200
    static let maxExBytes = 4096

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

    /// At most 200 code points as sent, no control characters but line breaks (`\n`); stored trimmed of white space
    /// and line breaks, and may be empty (no signature).
    static func signature(_ raw: String) throws(APIError) -> String {
        let controls = raw.unicodeScalars.contains { $0 != "\n" && $0.properties.generalCategory == .control }
        guard raw.unicodeScalars.count <= maxSignatureCharacters, !controls else {
            throw APIError.validationFailed.with(
                message: "`signature` must be at most 200 characters without control characters (but line breaks)")
        }
        return raw.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Any JSON value of at most 4096 bytes as the server writes it (compact, UTF-8).
    static func ex(_ value: JSONValue) throws(APIError) -> JSONValue {
        guard value.serialized().count <= maxExBytes else {
            throw APIError.validationFailed.with(message: "`ex` must be at most 4096 bytes of JSON")
        }
        return value
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

    /// A request body read with ParleyJSON: 1001 when it is empty or not JSON.
    static func jsonBody(_ bytes: [UInt8]) throws(APIError) -> JSONValue {
        guard !bytes.isEmpty else { throw APIError.invalidJSON.with(message: "request body is empty; expected JSON") }
        do {
            return try JSONValue.parse(bytes)
        } catch {
            throw APIError.invalidJSON
        }
    }

    /// User ids the server keeps for itself: `system` sends system messages.
    static let reservedUserIDs: Set<String> = ["system"]

    /// The id of a user about to be created (signed login, admin import): `userID`'s shape, and not reserved (1049).
    static func newUserID(_ raw: String, field: String = "userId") throws(APIError) -> String {
        let id = try userID(raw, field: field)
        guard !reservedUserIDs.contains(id) else {
            throw APIError.userIdReserved.with(message: "`\(field)` `\(id)` is reserved for the server")
        }
        return id
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

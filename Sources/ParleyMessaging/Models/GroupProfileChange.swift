import ParleyHTTP
import ParleyJSON

/// `PATCH /api/im/groups/{id}` (and the admin API's), validated: an absent field stays, and so does a null `name` or
/// `joinPolicy`; a null `avatarKey` or `ex` clears it, and a null or empty `announcement` or `introduction` clears it.
/// Read with ParleyJSON so that `ex` is kept as the app sent it (member order, numbers' text), as a user's `ex` is.
struct GroupProfileChange: Sendable, Hashable {
    static let maxAnnouncementCharacters = 4000
    static let maxIntroductionCharacters = 1000
    static let maxExBytes = 4096

    var name: String?
    /// nil: absent; .some(nil): remove; .some(key): set (shape-checked; the avatar check comes later).
    var avatarKey: String??
    var announcement: String?
    var introduction: String?
    /// nil: absent; .some(nil): clear; .some(object): set.
    var ex: JSONValue??
    var joinPolicy: GroupJoinPolicy?

    init(name: String? = nil, avatarKey: String?? = nil) {
        self.name = name
        self.avatarKey = avatarKey
    }

    /// Every field checked before anything is stored (1002 naming the field).
    init(fields body: JSONObject) throws(APIError) {
        switch body["name"] {
        case nil, .null?: break
        case .string(let raw)?: name = try MessagingInput.name(raw, field: "name")
        default: throw APIError.validationFailed.with(message: "`name` must be a string or null")
        }
        switch body["avatarKey"] {
        case nil: break
        case .null?: avatarKey = .some(nil)
        case .string(let raw)?: avatarKey = .some(try MessagingInput.objectKey(raw, field: "avatarKey"))
        default: throw APIError.validationFailed.with(message: "`avatarKey` must be an object key or null")
        }
        announcement = try Self.text(body["announcement"], field: "announcement", max: Self.maxAnnouncementCharacters)
        introduction = try Self.text(body["introduction"], field: "introduction", max: Self.maxIntroductionCharacters)
        switch body["ex"] {
        case nil: break
        case .null?: ex = .some(nil)
        case .object(let object)?:
            guard JSONValue.object(object).serialized().count <= Self.maxExBytes else {
                throw APIError.validationFailed.with(message: "`ex` must be at most \(Self.maxExBytes) bytes of JSON")
            }
            ex = .some(.object(object))
        default: throw APIError.validationFailed.with(message: "`ex` must be a JSON object or null")
        }
        switch body["joinPolicy"] {
        case nil, .null?: break
        case .string(let raw)? where GroupJoinPolicy(rawValue: raw) != nil: joinPolicy = GroupJoinPolicy(rawValue: raw)
        default: throw APIError.validationFailed.with(message: "`joinPolicy` must be open, approval or invite_only")
        }
        guard !isEmpty else { throw Self.nothingGiven }
    }

    static let nothingGiven = APIError.validationFailed.with(
        message: "give at least one of `name`, `avatarKey`, `announcement`, `introduction`, `ex`, `joinPolicy`")

    var isEmpty: Bool {
        name == nil && avatarKey == nil && announcement == nil && introduction == nil && ex == nil && joinPolicy == nil
    }

    /// A text that may be cleared: null or "" (after trimming) is "".
    private static func text(_ value: JSONValue?, field: String, max: Int) throws(APIError) -> String? {
        switch value {
        case nil: return nil
        case .null?: return ""
        case .string(let raw)?:
            if raw.allSatisfy(\.isWhitespace) && !MessagingInput.containsControl(raw, allowingLineBreaks: true) {
                return ""
            }
            return try MessagingInput.text(raw, field: field, maxCharacters: max)
        default: throw APIError.validationFailed.with(message: "`\(field)` must be a string or null")
        }
    }
}

import ParleyHTTP
import ParleyJSON

/// A send's `push: {title?, body?, sound?, disabled?}`: what the offline push of this message says and plays, or
/// that it gets none. Stored in `messages.push_options` (the push trigger reads `disabled`; the push worker the
/// rest), so the client's text reaches devices however late the push goes out.
public struct MessagePushOptions: Sendable, Equatable {
    public var title: String?
    public var body: String?
    /// A sound file in the app's bundle (`phone_ringing.mp3`), or `default`.
    public var sound: String?
    public var disabled: Bool

    /// In Unicode scalars: what lock screens show and APNs' 4 KiB payload leave room for.
    public static let maxTitleLength = 100
    public static let maxBodyLength = 400
    public static let maxSoundBytes = 64

    public init(title: String? = nil, body: String? = nil, sound: String? = nil, disabled: Bool = false) {
        self.title = title
        self.body = body
        self.sound = sound
        self.disabled = disabled
    }

    /// nil for an absent or null `push`; 1002 naming the field (`prefix` included) for anything malformed.
    public static func parse(_ value: JSONValue?, prefix: String) throws(APIError) -> MessagePushOptions? {
        guard let value, !value.isNull else { return nil }
        guard case .object(let object) = value else {
            throw APIError.validationFailed.with(message: "`\(prefix)push` must be an object")
        }
        for key in object.keys where !["title", "body", "sound", "disabled"].contains(key) {
            throw APIError.validationFailed.with(message: "unknown field `\(prefix)push.\(key)`")
        }
        func text(_ key: String, maxLength: Int) throws(APIError) -> String? {
            switch object[key] {
            case nil, .null?: return nil
            case .string(let text)?:
                // Counted in Unicode scalars, as JSON Schema's maxLength counts.
                guard !text.isEmpty, text.unicodeScalars.count <= maxLength,
                    !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" })
                else {
                    throw APIError.validationFailed.with(
                        message: "`\(prefix)push.\(key)` must be 1-\(maxLength) characters without control characters")
                }
                return text
            default: throw APIError.validationFailed.with(message: "wrong type for `\(prefix)push.\(key)`")
            }
        }
        var options = MessagePushOptions()
        options.title = try text("title", maxLength: maxTitleLength)
        options.body = try text("body", maxLength: maxBodyLength)
        if let sound = try text("sound", maxLength: maxSoundBytes) {
            // A file name, not a path: what iOS looks up in the app's bundle or Library/Sounds.
            guard sound.utf8.count <= maxSoundBytes, !sound.hasPrefix("."),
                sound.utf8.allSatisfy({ byte in
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                        || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
                })
            else {
                throw APIError.validationFailed.with(
                    message: "`\(prefix)push.sound` must be a file name of at most \(maxSoundBytes) [A-Za-z0-9._-]")
            }
            options.sound = sound
        }
        switch object["disabled"] {
        case nil, .null?: break
        case .bool(let disabled)?: options.disabled = disabled
        default: throw APIError.validationFailed.with(message: "wrong type for `\(prefix)push.disabled`")
        }
        return options
    }

    /// The `messages.push_options` document; nil when it says nothing (no column value, the default push).
    public var stored: String? {
        var fields: [(String, JSONValue)] = []
        if disabled { fields.append(("disabled", .bool(true))) }
        if let title { fields.append(("title", .string(title))) }
        if let body { fields.append(("body", .string(body))) }
        if let sound { fields.append(("sound", .string(sound))) }
        return fields.isEmpty ? nil : JSONValue.object(JSONObject(fields)).serializedString
    }
}

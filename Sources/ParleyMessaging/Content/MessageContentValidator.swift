import ParleyHTTP
import ParleyJSON
import ParleyMessageModel

/// Checks a message's `content` against its `msgType` and returns the JSON text to store. Structured types have
/// their required fields checked by type and range; extra fields are kept (newer clients may add some) within
/// the type's size limit.
struct MessageContentValidator: Sendable {
    let configuration: MessagingConfiguration

    static let maxDimension: Int64 = 100_000
    static let maxDurationSeconds = 7 * 24 * 3600.0

    /// The serialized content, or 1002 naming what is wrong.
    func validate(_ type: MessageType, _ content: JSONValue, field: String = "content") throws(APIError) -> [UInt8] {
        try StorableJSON.check(content, field: field)
        let serialized = content.serialized()
        switch type {
        case .text:
            guard case .string(let text) = content else { throw invalid(field, "must be a string for text messages") }
            try checkText(text, field: field)
        case .richText:
            let object = try requireObject(content, field)
            guard case .string(let text)? = object["text"] else {
                throw invalid(field, "must have a string `text` (its plain-text form) for richText messages")
            }
            try checkText(text, field: "\(field).text")
            try checkSize(serialized, limit: configuration.maxCustomBytes + 4 * configuration.maxTextCharacters, field)
        case .image:
            let object = try requireObject(content, field)
            try requireObjectKey(object, "objectKey", field)
            // Numbers, fractions too: seed 004 sends a resized UIImage's size in points (CGFloat, 640 x 853.33).
            try requireNumber(object, "width", in: 1...Double(Self.maxDimension), field)
            try requireNumber(object, "height", in: 1...Double(Self.maxDimension), field)
            try optionalObjectKey(object, "thumbnailObjectKey", field)
            try checkSize(serialized, limit: configuration.maxCustomBytes, field)
        case .video:
            let object = try requireObject(content, field)
            try requireObjectKey(object, "objectKey", field)
            try requireDuration(object, field)
            try optionalObjectKey(object, "coverObjectKey", field)
            try checkSize(serialized, limit: configuration.maxCustomBytes, field)
        case .audio:
            let object = try requireObject(content, field)
            try requireObjectKey(object, "objectKey", field)
            try requireDuration(object, field)
            try checkSize(serialized, limit: configuration.maxCustomBytes, field)
        case .file:
            let object = try requireObject(content, field)
            try requireObjectKey(object, "objectKey", field)
            guard case .string(let name)? = object["name"], !name.isEmpty, name.count <= 255,
                !MessagingInput.containsControl(name)
            else {
                throw invalid("\(field).name", "must be a file name of 1-255 characters")
            }
            try requireInteger(object, "size", in: 0...Int64.max, field)
            try checkSize(serialized, limit: configuration.maxCustomBytes, field)
        case .location:
            let object = try requireObject(content, field)
            try requireNumber(object, "lat", in: -90...90, field)
            try requireNumber(object, "lng", in: -180...180, field)
            if let name = object["name"], name.stringValue.map({ $0.count > 256 }) ?? true {
                throw invalid("\(field).name", "must be a string of at most 256 characters")
            }
            try checkSize(serialized, limit: configuration.maxCustomBytes, field)
        case .custom:
            try checkSize(serialized, limit: configuration.maxCustomBytes, field)
        case .callAudio, .callVideo:
            let object = try requireObject(content, field)
            if object["durationSec"] != nil { try requireDuration(object, field) }
            if let status = object["status"], status.stringValue.map({ $0.isEmpty || $0.count > 32 }) ?? true {
                throw invalid("\(field).status", "must be a string of 1-32 characters")
            }
            try checkSize(serialized, limit: configuration.maxCustomBytes, field)
        case .forward:
            try validateForward(content, field: field)
            try checkSize(serialized, limit: configuration.maxForwardBytes, field)
        case .notify:
            throw APIError.validationFailed.with(message: "`msgType` notify is written by the server only")
        }
        return serialized
    }

    /// The object keys a (validated) content references: `objectKey`, `thumbnailObjectKey`, `coverObjectKey`; for
    /// custom messages every reference `FileReferences` finds (1002 when one is malformed, too deep or one too
    /// many); and those of forwarded messages (their custom ones sharing one `FileReferences.maxCount`). The same
    /// keys as the database's `parley_message_object_keys` (0006, 0012).
    static func objectKeys(_ type: MessageType, _ content: JSONValue) throws(APIError) -> [String] {
        func keys(of value: JSONValue?) -> [String] {
            guard case .object(let object)? = value else { return [] }
            return ["objectKey", "thumbnailObjectKey", "coverObjectKey"].compactMap { object[$0]?.stringValue }
        }
        switch type {
        case .image, .video, .audio, .file:
            return keys(of: content)
        case .custom:
            return try FileReferences.scan(content)
        case .forward:
            guard case .object(let object) = content, case .array(let messages)? = object["messages"] else { return [] }
            var all: [String] = []
            var seen: Set<String> = []
            var customReferences = 0
            for (index, message) in messages.enumerated() {
                guard case .object(let item) = message else { continue }
                var found = keys(of: item["content"])
                if item["msgType"]?.stringValue == MessageType.custom.rawValue, let inner = item["content"] {
                    let references = try FileReferences.scan(inner, field: "content.messages[\(index)].content")
                    customReferences += references.count
                    guard customReferences <= FileReferences.maxCount else {
                        throw APIError.validationFailed.with(
                            message:
                                "`content.messages` reference more than \(FileReferences.maxCount) files in custom messages"
                        )
                    }
                    found += references
                }
                for key in found where seen.insert(key).inserted { all.append(key) }
            }
            return all
        default:
            return []
        }
    }

    /// `extra`: any JSON within `maxExtraBytes`; nil when absent or null.
    func validateExtra(_ extra: JSONValue?) throws(APIError) -> [UInt8]? {
        guard let extra, !extra.isNull else { return nil }
        try StorableJSON.check(extra, field: "extra")
        let serialized = extra.serialized()
        guard serialized.count <= configuration.maxExtraBytes else {
            throw invalid("extra", "must be at most \(configuration.maxExtraBytes) bytes of JSON")
        }
        return serialized
    }

    /// `{messages: [{msgType, content, ...}]}`: 1...maxForwardMessages entries, each a valid message of a
    /// sendable type other than forward (no nesting, so the size of the check stays bounded).
    private func validateForward(_ content: JSONValue, field: String) throws(APIError) {
        let object = try requireObject(content, field)
        guard case .array(let messages)? = object["messages"], !messages.isEmpty,
            messages.count <= configuration.maxForwardMessages
        else {
            throw invalid("\(field).messages", "must be an array of 1-\(configuration.maxForwardMessages) messages")
        }
        for (index, entry) in messages.enumerated() {
            let path = "\(field).messages[\(index)]"
            let item = try requireObject(entry, path)
            guard case .string(let rawType)? = item["msgType"], let type = MessageType(rawValue: rawType),
                type.isClientSendable, type != .forward
            else {
                throw invalid("\(path).msgType", "must be a message type other than notify and forward")
            }
            guard let inner = item["content"] else { throw invalid("\(path).content", "is required") }
            _ = try validate(type, inner, field: "\(path).content")
        }
    }

    // MARK: Field checks

    private func checkText(_ text: String, field: String) throws(APIError) {
        guard !text.isEmpty, text.count <= configuration.maxTextCharacters else {
            throw invalid(field, "must be 1-\(configuration.maxTextCharacters) characters")
        }
    }

    private func checkSize(_ serialized: [UInt8], limit: Int, _ field: String) throws(APIError) {
        guard serialized.count <= limit else { throw invalid(field, "must be at most \(limit) bytes of JSON") }
    }

    private func requireObject(_ value: JSONValue, _ field: String) throws(APIError) -> JSONObject {
        guard case .object(let object) = value else { throw invalid(field, "must be a JSON object") }
        return object
    }

    private func requireObjectKey(_ object: JSONObject, _ key: String, _ field: String) throws(APIError) {
        guard case .string(let value)? = object[key], MessagingInput.isObjectKey(value) else {
            throw invalid("\(field).\(key)", "must be an object key of 1-512 printable ASCII characters")
        }
    }

    private func optionalObjectKey(_ object: JSONObject, _ key: String, _ field: String) throws(APIError) {
        if let value = object[key], !value.isNull { try requireObjectKey(object, key, field) }
    }

    private func requireInteger(_ object: JSONObject, _ key: String, in range: ClosedRange<Int64>, _ field: String)
        throws(APIError)
    {
        guard let value = object[key]?.int64Value, range.contains(value) else {
            let upper = range.upperBound == Int64.max ? "" : " to \(range.upperBound)"
            throw invalid("\(field).\(key)", "must be an integer from \(range.lowerBound)\(upper)")
        }
    }

    private func requireNumber(_ object: JSONObject, _ key: String, in range: ClosedRange<Double>, _ field: String)
        throws(APIError)
    {
        guard let value = object[key]?.doubleValue, range.contains(value) else {
            throw invalid("\(field).\(key)", "must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    private func requireDuration(_ object: JSONObject, _ field: String) throws(APIError) {
        guard let value = object["durationSec"]?.doubleValue, value >= 0, value <= Self.maxDurationSeconds else {
            throw invalid(
                "\(field).durationSec", "must be a number of seconds from 0 to \(Int(Self.maxDurationSeconds))")
        }
    }

    private func invalid(_ field: String, _ problem: String) -> APIError {
        APIError.validationFailed.with(message: "`\(field)` \(problem)")
    }
}

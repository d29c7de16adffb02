import ParleyHTTP
import ParleyJSON
import ParleyMessageModel

/// `content` as clients may send it: the JSON value, or (as the seed SDKs do, whose `content` is a `String`) a string
/// holding the JSON document. Turns the second form into the first, so that both are validated and stored alike.
enum MessageContentInput {
    /// A string content inside a request body sat one level below the body's top: parsed on its own it may nest no
    /// deeper than it could have as a value there.
    static let maxDepth = JSONValue.defaultMaxDepth - 1

    /// The content to validate: text as sent; for structured types a string is parsed (bad JSON text: 1002 naming
    /// `field`); for `custom` a string holding a JSON object or array becomes that document and any other string
    /// stays a string.
    static func value(_ type: MessageType, _ raw: JSONValue, field: String = "content") throws(APIError) -> JSONValue {
        guard type != .text, case .string(let text) = raw else { return raw }
        if type == .custom {
            guard let document = try? JSONValue.parse(text, maxDepth: maxDepth) else { return raw }
            switch document {
            case .object, .array: return document
            default: return raw
            }
        }
        do {
            return try JSONValue.parse(text, maxDepth: maxDepth)
        } catch {
            throw APIError.validationFailed.with(
                message: "`\(field)` is a string but not a JSON document for \(type.rawValue) messages: \(error.reason)"
            )
        }
    }
}

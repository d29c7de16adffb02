import ParleyJSON
import ParleyTestSupport
import Testing

/// The UTF-8 bytes of `text`.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A number with exactly this text (the literal forms would normalize it).
func number(_ text: String) -> JSONValue {
    guard let number = JSONNumber(text: text) else { preconditionFailure("invalid number text \(text)") }
    return .number(number)
}

/// The error `parse` throws for `input`, or nil when it accepts it.
func parseError(_ input: [UInt8], maxDepth: Int = JSONValue.defaultMaxDepth) -> JSONParseError? {
    do {
        _ = try JSONValue.parse(input, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

/// Why a document was rejected and where.
///
/// The reason is short and safe to show a client (it names at most a truncated, escaped object
/// key), so an HTTP layer can put it in a 400 answer as is.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Byte offset into the input where parsing failed.
    public var offset: Int
    /// Short, client-safe reason, e.g. "unexpected character" or "nesting deeper than 64".
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSONParseError {
    static func emptyInput(at offset: Int) -> Self { .init(offset: offset, reason: "empty input") }
    static func unexpectedEnd(at offset: Int) -> Self { .init(offset: offset, reason: "unexpected end of input") }
    static func unexpectedCharacter(at offset: Int) -> Self { .init(offset: offset, reason: "unexpected character") }
    static func invalidLiteral(at offset: Int) -> Self { .init(offset: offset, reason: "invalid literal") }
    static func invalidNumber(at offset: Int) -> Self { .init(offset: offset, reason: "invalid number") }
    static func leadingZero(at offset: Int) -> Self { .init(offset: offset, reason: "leading zero in number") }
    static func unterminatedString(at offset: Int) -> Self { .init(offset: offset, reason: "unterminated string") }
    static func controlCharacter(at offset: Int) -> Self {
        .init(offset: offset, reason: "unescaped control character in string")
    }
    static func invalidEscape(at offset: Int) -> Self { .init(offset: offset, reason: "invalid escape") }
    static func invalidUnicodeEscape(at offset: Int) -> Self { .init(offset: offset, reason: "invalid \\u escape") }
    static func unpairedSurrogate(at offset: Int) -> Self { .init(offset: offset, reason: "unpaired surrogate") }
    static func invalidUTF8(at offset: Int) -> Self { .init(offset: offset, reason: "invalid UTF-8") }
    static func expectedKey(at offset: Int) -> Self { .init(offset: offset, reason: "expected string key") }
    static func expectedColon(at offset: Int) -> Self { .init(offset: offset, reason: "expected ':' after key") }
    static func expectedCommaOrBracket(at offset: Int) -> Self {
        .init(offset: offset, reason: "expected ',' or ']'")
    }
    static func expectedCommaOrBrace(at offset: Int) -> Self { .init(offset: offset, reason: "expected ',' or '}'") }
    static func trailingCharacters(at offset: Int) -> Self {
        .init(offset: offset, reason: "unexpected data after value")
    }
    static func tooDeep(at offset: Int, maxDepth: Int) -> Self {
        .init(offset: offset, reason: "nesting deeper than \(maxDepth)")
    }

    /// Names the key, truncated and escaped: the reason goes to clients and logs, so it must stay
    /// short and free of control characters whatever the input was.
    static func duplicateKey(_ key: String, at offset: Int) -> Self {
        let shown = key.count > 32 ? String(key.prefix(32)) + "..." : key
        var escaped: [UInt8] = []
        JSONString.append(shown, to: &escaped)
        let inner = String(decoding: escaped.dropFirst().dropLast(), as: UTF8.self)
        return .init(offset: offset, reason: "duplicate key `\(inner)`")
    }
}

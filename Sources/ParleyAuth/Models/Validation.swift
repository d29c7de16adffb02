/// Input rules shared by the routes, each answering 1002 with the field named.
public enum Validation {
    /// User ids: 1-64 of `[A-Za-z0-9_.@-]` (apps with their own user base bring their own ids).
    public static func isValidUserID(_ id: String) -> Bool {
        let bytes = id.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy(isIdentifierByte)
    }

    /// Usernames: 3-64 of `[A-Za-z0-9_.@-]`, compared case-insensitively (stored lower-cased).
    static func normalizedUsername(_ raw: String) -> String? {
        let bytes = raw.utf8
        guard (3...64).contains(bytes.count), bytes.allSatisfy(isIdentifierByte) else { return nil }
        return raw.lowercased()
    }

    /// Platforms: 1-32 of `[a-z0-9_-]` after lower-casing.
    static func normalizedPlatform(_ raw: String) -> String? {
        let lower = raw.lowercased()
        let bytes = lower.utf8
        guard (1...32).contains(bytes.count),
            bytes.allSatisfy({ isLowerAlnum($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else { return nil }
        return lower
    }

    /// Free text shown to people (nicknames, device models): at most `maxCharacters`, no control characters.
    static func isValidText(_ text: String, maxCharacters: Int) -> Bool {
        text.count <= maxCharacters && !text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        isLowerAlnum(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "@")
            || byte == UInt8(ascii: "-")
    }

    private static func isLowerAlnum(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }
}

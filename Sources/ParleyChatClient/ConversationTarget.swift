/// What `/open` and `--to` name: a user (1:1), a group, a conversation id, or a line of the last `/list`.
public enum ConversationTarget: Sendable, Equatable {
    /// A 1:1 conversation with this user id (`u_...`, or an app backend's own id).
    case user(String)
    /// A group by its id (`g_...`).
    case group(String)
    /// A conversation id as the server writes it: `si:LOW:HIGH` or `sg:GROUP`.
    case conversation(String)
    /// The n-th line (from 1) of the last `/list`.
    case listIndex(Int)

    /// `u_x` / `user:x` → user, `g_x` / `group:x` / `sg:x` → group, `si:a:b` → conversation, `3` → list line.
    public init(parsing text: String) throws(ChatUsageError) {
        let text = text.trimmingWhitespace()
        guard !text.isEmpty, !text.contains(where: \.isWhitespace) else {
            throw ChatUsageError("expected a user id, g_GROUP, a conversation id or a /list number, got \"\(text)\"")
        }
        if let number = Int(text) {
            guard number >= 1 else { throw ChatUsageError("/list numbers start at 1") }
            self = .listIndex(number)
        } else if text.hasPrefix("user:") {
            self = .user(try Self.id(text.dropFirst(5)))
        } else if text.hasPrefix("group:") {
            self = .group(try Self.id(text.dropFirst(6)))
        } else if text.hasPrefix("sg:") {
            self = .group(try Self.id(text.dropFirst(3)))
        } else if text.hasPrefix("si:") {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3 else { throw ChatUsageError("a 1:1 conversation id is si:USER:USER, got \(text)") }
            _ = try Self.id(parts[1])
            _ = try Self.id(parts[2])
            self = .conversation(text)
        } else if text.hasPrefix("g_") {
            self = .group(try Self.id(Substring(text)))
        } else {
            self = .user(try Self.id(Substring(text)))
        }
    }

    /// User and group ids are 1-64 of `[A-Za-z0-9_.@-]` (openapi.yaml).
    private static func id(_ text: Substring) throws(ChatUsageError) -> String {
        let allowed = text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "@")
                || byte == UInt8(ascii: "-")
        }
        guard allowed, (1...64).contains(text.utf8.count) else {
            throw ChatUsageError("\"\(text)\" is not an id (1-64 letters, digits, _ . @ -)")
        }
        return String(text)
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}

import ParleyHTTP

/// Conversation ids both sides compute the same way, without asking the server:
/// - 1:1: `si:` + the lower user id + `:` + the higher one (byte order). `:` cannot occur in a user id, so the
///   pair is unambiguous; a note to self is `si:a:a`.
/// - group: `sg:` + the group id.
public enum ConversationID {
    public static func single(_ a: String, _ b: String) -> String {
        Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8)) ? "si:\(a):\(b)" : "si:\(b):\(a)"
    }

    public static func group(_ groupId: String) -> String { "sg:" + groupId }

    /// `raw` if it is a well-formed conversation id, else 1002 (for callers outside this feature).
    public static func validated(_ raw: String) throws(APIError) -> String {
        try MessagingInput.conversationID(raw).id
    }

    /// The two users of a 1:1 conversation id, nil for a group id (or a malformed one).
    public static func singleMembers(_ id: String) -> [String]? {
        guard let parsed = parse(id), parsed.chatType == .single else { return nil }
        return parsed.parts[0] == parsed.parts[1] ? [parsed.parts[0]] : parsed.parts
    }

    /// Well-formed ids only (answers 1002 otherwise); whether the caller may see it is checked elsewhere. One pass
    /// over the bytes (every 1:1 delivery resolves its two members with it).
    static func parse(_ raw: String) -> (chatType: ChatType, parts: [String])? {
        guard raw.utf8.count <= 140 else { return nil }
        var raw = raw
        return raw.withUTF8 { bytes -> (chatType: ChatType, parts: [String])? in
            let colon = UInt8(ascii: ":")
            guard bytes.count >= 4, bytes[0] == UInt8(ascii: "s"), bytes[2] == colon else { return nil }
            let rest = UnsafeBufferPointer(rebasing: bytes[3...])
            switch bytes[1] {
            case UInt8(ascii: "i"):
                guard let split = rest.firstIndex(of: colon) else { return nil }
                let first = UnsafeBufferPointer(rebasing: rest[..<split])
                let second = UnsafeBufferPointer(rebasing: rest[(split + 1)...])
                // Identifiers never hold `:`; the lower id comes first (a note to self repeats one).
                guard MessagingInput.isIdentifier(first), MessagingInput.isIdentifier(second),
                    !second.lexicographicallyPrecedes(first)
                else { return nil }
                return (.single, [String(decoding: first, as: UTF8.self), String(decoding: second, as: UTF8.self)])
            case UInt8(ascii: "g"):
                guard MessagingInput.isIdentifier(rest) else { return nil }
                return (.group, [String(decoding: rest, as: UTF8.self)])
            default:
                return nil
            }
        }
    }
}

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

    /// Well-formed ids only (answers 1002 otherwise); whether the caller may see it is checked elsewhere.
    static func parse(_ raw: String) -> (chatType: ChatType, parts: [String])? {
        guard raw.utf8.count <= 140 else { return nil }
        let parts = raw.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        switch parts.first {
        case "si" where parts.count == 3 && MessagingInput.isIdentifier(parts[1]) && MessagingInput.isIdentifier(parts[2])
            && single(parts[1], parts[2]) == raw:
            return (.single, [parts[1], parts[2]])
        case "sg" where parts.count == 2 && MessagingInput.isIdentifier(parts[1]):
            return (.group, [parts[1]])
        default:
            return nil
        }
    }
}

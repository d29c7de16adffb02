/// Conversation ids are computed, not looked up (openapi.yaml, "Messaging"): `si:` + the lower user id + `:` +
/// the higher one in byte order for 1:1, `sg:` + the group id for groups.
public enum ConversationID {
    public static func single(_ a: String, _ b: String) -> String {
        a.utf8.lexicographicallyPrecedes(b.utf8) ? "si:\(a):\(b)" : "si:\(b):\(a)"
    }

    public static func group(_ groupId: String) -> String { "sg:\(groupId)" }

    /// The other user of a 1:1 conversation id (`me` for a note to self); nil for groups and malformed ids.
    public static func peer(of conversationId: String, me: String) -> String? {
        let parts = conversationId.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "si" else { return nil }
        if parts[1] == me { return String(parts[2]) }
        if parts[2] == me { return String(parts[1]) }
        return nil
    }

    /// The group id of `sg:GROUP`; nil otherwise.
    public static func groupId(of conversationId: String) -> String? {
        conversationId.hasPrefix("sg:") && conversationId.count > 3 ? String(conversationId.dropFirst(3)) : nil
    }
}

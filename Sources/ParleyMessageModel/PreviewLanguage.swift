/// The language of texts the server writes for a device (previews, push alerts): the session's `language`
/// (migrations/0011, from the login's `Accept-Language`), English unless it is Chinese.
public enum PreviewLanguage: String, Sendable, Hashable, CaseIterable {
    case en, zh

    /// A stored `sessions.language`; anything unknown (or none) is English.
    public init(stored: String?) {
        self = stored == "zh" ? .zh : .en
    }
}

import ParleyCrypto
import ParleyHTTP

/// `GET /api/users/search?q=&limit=&cursor=`, checked: every bad value is 1002 naming the parameter (1114 for a
/// cursor that is not one).
struct UserSearchQuery: Sendable, Hashable {
    static let maxCharacters = 64
    static let defaultLimit = 20
    static let maxLimit = 50

    /// Trimmed of spaces.
    var text: String
    var limit: Int
    /// Where the previous page ended; nil for the first page.
    var after: UserSearchCursor?

    init(text: String, limit: Int = Self.defaultLimit, after: UserSearchCursor? = nil) {
        self.text = text
        self.limit = limit
        self.after = after
    }

    init(_ query: HTTPQuery) throws(APIError) {
        // The nickname rule (openapi.yaml's Nickname): what is searched for could be a nickname.
        let trimmed = try query.searchText(maxCharacters: Self.maxCharacters)
        let limit = try query.limit(defaultLimit: Self.defaultLimit, max: Self.maxLimit)
        let after = try query.searchCursor { UserSearchCursor($0) }
        self.init(text: trimmed, limit: limit, after: after)
    }
}

/// The last user of a search page: exact matches (rank 0) come before nickname-prefix matches (rank 1), each in
/// (lower-cased nickname, id) order, the order of the `users_nickname_search` index. Written
/// `<rank>-<hex of the lower-cased nickname>-<id>`; every string of that form is a position, so a cursor the server
/// never issued pages all the same (openapi.yaml's pattern says which strings are cursors).
struct UserSearchCursor: Sendable, Hashable, CustomStringConvertible {
    static let maxKeyBytes = 1024

    var rank: Int
    var key: String
    var id: String

    init(rank: Int, key: String, id: String) {
        self.rank = rank
        self.key = key
        self.id = id
    }

    init?(_ text: String) {
        let parts = text.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "0" || parts[0] == "1", parts[1].utf8.count <= 2 * Self.maxKeyBytes,
            let bytes = Hex.decode(String(parts[1])), MessagingInput.isIdentifier(parts[2])
        else { return nil }
        // Any bytes are a position; PostgreSQL's text holds neither NUL nor invalid UTF-8.
        let decoded = String(decoding: bytes, as: UTF8.self).unicodeScalars.filter { $0 != "\u{0}" }
        let key = String(String.UnicodeScalarView(decoded))
        self.init(rank: parts[0] == "0" ? 0 : 1, key: key, id: String(parts[2]))
    }

    var description: String { "\(rank)-\(Hex.encode(Array(key.utf8)))-\(id)" }
}

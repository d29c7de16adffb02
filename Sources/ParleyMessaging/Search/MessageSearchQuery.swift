import ParleyHTTP

/// `GET /api/im/search?q=&conversationId=&limit=&cursor=`, checked: every bad value is 1002 naming the parameter
/// (1114 for a cursor that is not one).
struct MessageSearchQuery: Sendable, Hashable {
    static let maxCharacters = 100
    static let defaultLimit = 20
    static let maxLimit = 100

    /// Trimmed of spaces.
    var text: String
    /// Only this conversation (the caller must belong to it); nil for every conversation the caller reads.
    var conversationId: String?
    var limit: Int
    /// Where the previous page ended; nil for the first page.
    var before: MessageSearchCursor?

    init(
        text: String, conversationId: String? = nil, limit: Int = Self.defaultLimit,
        before: MessageSearchCursor? = nil
    ) {
        self.text = text
        self.conversationId = conversationId
        self.limit = limit
        self.before = before
    }

    init(_ query: HTTPQuery) throws(APIError) {
        // `q` with no word or CJK character in it finds nothing rather than being refused.
        let trimmed = try query.searchText(maxCharacters: Self.maxCharacters)
        var conversationId: String?
        if let raw = try query.value(for: "conversationId"), !raw.isEmpty {
            guard ConversationID.parse(String(raw)) != nil else {
                // A 1:1 id with its pair the wrong way round names no conversation anyone belongs to.
                let parts = raw.split(separator: ":", omittingEmptySubsequences: false)
                if parts.count == 3, parts[0] == "si", ConversationID.parse("si:\(parts[2]):\(parts[1])") != nil {
                    throw APIError.conversationNotFound
                }
                throw APIError.validationFailed.with(
                    message: "`conversationId` is not a conversation id (si:USER:USER or sg:GROUP)")
            }
            conversationId = String(raw)
        }
        let limit = try query.limit(defaultLimit: Self.defaultLimit, max: Self.maxLimit)
        let before = try query.searchCursor { MessageSearchCursor($0) }
        self.init(text: trimmed, conversationId: conversationId, limit: limit, before: before)
    }
}

/// The last message of a search page, by (created_at, id), the order of the answer (newest first). Written
/// `<created_at in microseconds since 1970>-<id>`; every string of that form is a position.
struct MessageSearchCursor: Sendable, Hashable, CustomStringConvertible {
    var createdAtMicroseconds: Int64
    var id: Int64

    init(createdAtMicroseconds: Int64, id: Int64) {
        self.createdAtMicroseconds = createdAtMicroseconds
        self.id = id
    }

    /// The last instant timestamps are written for (the end of year 9999); later positions are the same as it.
    static let maxMicroseconds: Int64 = 253_402_300_799_999_999

    init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        // Digits only (Int64's parser would take a sign).
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.count <= 18 && $0.allSatisfy(\.isASCIIDigit) }),
            let micros = Int64(parts[0]), let id = Int64(parts[1])
        else { return nil }
        self.init(createdAtMicroseconds: min(micros, Self.maxMicroseconds), id: id)
    }

    var description: String { "\(createdAtMicroseconds)-\(id)" }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

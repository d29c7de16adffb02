import Foundation
import ParleyHTTP
import ParleyJSON

/// Identifies a room inside one app (every lookup is scoped by the app).
struct RoomKey: Hashable, Sendable {
    var appId: Int64
    var roomId: Int64
}

/// A chat room as clients see it. `roomId` is written as a string, as every id is (JavaScript loses digits past
/// 2^53); requests take it as a string or a number.
struct Room: Sendable, Encodable {
    var id: Int64
    var appId: Int64
    var name: String
    /// nil: made by the app's backend.
    var creatorId: String?
    /// The app's own data, as JSON text.
    var ex: String?
    var createdAt: Date

    enum CodingKeys: String, CodingKey { case roomId, name, creatorId, ex, createdAt }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(String(id), forKey: .roomId)
        try c.encode(name, forKey: .name)
        try c.encode(creatorId, forKey: .creatorId)
        try c.encode(ex, forKey: .ex)
        try c.encode(createdAt, forKey: .createdAt)
    }

    static let maxNameCharacters = 128
    static let maxExBytes = 4096
}

/// A room with its online count (connections inside it on every instance, see `RoomOnline`).
struct RoomInfo: Sendable, Encodable {
    var room: Room
    var online: Int

    enum CodingKeys: String, CodingKey { case online }

    func encode(to encoder: any Encoder) throws {
        try room.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(online, forKey: .online)
    }
}

/// A message sent into a room. Its JSON is the `message` event's shape with `chatType` "room" and `conversationId`
/// and `toId` the room id (so a client's message parser reads it unchanged); there is no seq, read state or revoke
/// in a room, so `seq` is 0 and `revoked` false.
struct RoomMessage: Sendable, Encodable {
    var id: Int64
    var appId: Int64
    var roomId: Int64
    var fromId: String
    var msgType: String
    /// As clients get it (the wire text).
    var content: String
    var extra: String?
    var clientMsgId: String?
    /// A command ("X entered the room": `custom` with `noUnread`): delivered, never in history.
    var command: Bool
    var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, roomId, conversationId, seq, fromId, toId, chatType, msgType, content, extra, clientMsgId, noUnread,
            revoked, revokedBy, createdAt, editedAt
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let room = String(roomId)
        try c.encode(String(id), forKey: .id)
        try c.encode(room, forKey: .roomId)
        try c.encode(room, forKey: .conversationId)
        try c.encode(0, forKey: .seq)
        try c.encode(fromId, forKey: .fromId)
        try c.encode(room, forKey: .toId)
        try c.encode("room", forKey: .chatType)
        try c.encode(msgType, forKey: .msgType)
        try c.encode(content, forKey: .content)
        try c.encode(extra, forKey: .extra)
        try c.encode(clientMsgId, forKey: .clientMsgId)
        try c.encode(command, forKey: .noUnread)
        try c.encode(false, forKey: .revoked)
        try c.encodeNil(forKey: .revokedBy)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encodeNil(forKey: .editedAt)
    }

    func jsonBytes() -> [UInt8] {
        // Cannot fail: no floating-point field.
        (try? JSONCoding.bytesEncoder.encode(self)) ?? Array("null".utf8)
    }
}

/// A page of a room's recent history, newest first; `nextCursor` (the last message's id) reads the page after it.
struct RoomMessagePage: Sendable, Encodable {
    var messages: [RoomMessage]
    var hasMore: Bool
    var nextCursor: String?
}

/// Which part of a room's recent history to read: older than `cursor` (a message id), within `begin`...`end`
/// (epoch milliseconds, inclusive), at most `limit`, newest first. Only the room's bounded history is ever read.
struct RoomHistoryQuery: Sendable, Equatable {
    var cursor: Int64?
    var begin: Int64?
    var end: Int64?
    var limit: Int

    static let maxLimit = 100
    /// The latest milliseconds a bound may name (the end of year 9999).
    static let maxMilliseconds: Int64 = 253_402_300_799_999

    init(cursor: Int64? = nil, begin: Int64? = nil, end: Int64? = nil, limit: Int) {
        self.cursor = cursor
        self.begin = begin
        self.end = end
        self.limit = limit
    }

    /// `limit`, `cursor`, `begin`, `end` from a query string; 0 for `cursor` or `end` is no bound (seed 002's
    /// history calls send `lastid 0` and `end 0` for "from the newest").
    init(_ query: HTTPQuery) throws(APIError) {
        let limit = try query.limit(defaultLimit: 20, max: Self.maxLimit)
        let cursor = try query.value(for: "cursor") == "0" ? nil : try query.positiveID(for: "cursor")
        let begin = try query.integer(for: "begin", in: 0...Self.maxMilliseconds)
        var end = try query.integer(for: "end", in: 0...Self.maxMilliseconds)
        if end == 0 { end = nil }
        if let begin, let end, begin > end {
            throw APIError.validationFailed.with(message: "`begin` must not be after `end`")
        }
        self.init(cursor: cursor, begin: begin, end: end, limit: limit)
    }
}

/// Room id as a frame or a path gives it: a positive integer, or a string of one.
enum RoomID {
    static func parse(_ value: JSONValue?, field: String) throws(APIError) -> Int64 {
        switch value {
        case .string(let text)?: return try parse(text, field: field)
        case .number(let number)?: return try parse(number.text, field: field)
        default: throw APIError.validationFailed.with(message: "`\(field)` must be a room id")
        }
    }

    static func parse(_ text: some StringProtocol, field: String) throws(APIError) -> Int64 {
        let digits = text.utf8
        guard (1...18).contains(digits.count), digits.first != UInt8(ascii: "0"),
            digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let id = Int64(text)
        else { throw APIError.validationFailed.with(message: "`\(field)` must be a room id") }
        return id
    }
}

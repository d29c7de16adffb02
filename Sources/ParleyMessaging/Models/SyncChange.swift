import ParleyJSON

/// One entry of `GET /api/im/sync`: `{"type": ..., ...}` where `type` is message, revoke, edit, read,
/// conversation or membership; message and edit entries carry the message as it is now.
public struct SyncChange: Sendable, Encodable {
    public var type: String
    public var message: IMMessage?
    public var fields: JSONObject

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(type, forKey: Key("type"))
        if let message { try container.encode(message, forKey: Key("message")) }
        // A social change's own `message` (a friend request's greeting) is a field like any other.
        for (key, value) in fields where key != "type" && (message == nil || key != "message") {
            try container.encode(value, forKey: Key(key))
        }
    }
}

/// A page of changes and the cursor to ask with next time.
public struct SyncPage: Sendable, Encodable {
    public var changes: [SyncChange]
    public var cursor: String
    public var hasMore: Bool
}

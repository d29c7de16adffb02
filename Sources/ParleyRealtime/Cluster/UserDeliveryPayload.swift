import ParleyJSON

/// What a routed relay (NATS) carries to the instances holding one recipient's sockets: who gets it and the frame
/// itself, encoded once by the instance that stored the event, so that no receiver reads the message back from the
/// database or encodes it again.
///
///   {"a":APP,"c":CONV,"u":USER,"o":SESSION?,"x":USER?,"s":1?}\n<the WebSocket frame's bytes>
///
/// `o`: the session whose request caused it (it got the answer and skips the echo); `x`: a user none of whose
/// devices gets it (typing); `s`: the recipient's conversation summary changed (a `conversation` event follows).
struct UserDeliveryPayload: Sendable, Equatable {
    var appId: Int64
    var conversationId: String
    var userId: String
    var origin: String?
    var excludedUserId: String?
    var touchesSummary: Bool
    var frame: [UInt8]

    /// The header without `u`, shared by every recipient of one event (written once, then per user).
    struct Header {
        let head: [UInt8]
        let tail: [UInt8]

        init(
            appId: Int64, conversationId: String, origin: String?, excludedUserId: String?,
            touchesSummary: Bool
        ) {
            head =
                Array(#"{"a":"#.utf8) + Array(String(appId).utf8) + Array(#","c":"#.utf8)
                + JSONValue.string(conversationId).serialized() + Array(#","u":"#.utf8)
            var fields: [(String, JSONValue)] = []
            if let origin { fields.append(("o", .string(origin))) }
            if let excludedUserId { fields.append(("x", .string(excludedUserId))) }
            if touchesSummary { fields.append(("s", 1)) }
            var tail: [UInt8] = []
            for (key, value) in fields {
                tail.append(UInt8(ascii: ","))
                tail += JSONValue.string(key).serialized()
                tail.append(UInt8(ascii: ":"))
                tail += value.serialized()
            }
            tail += Array("}\n".utf8)
            self.tail = tail
        }

        /// The whole payload for `userId`.
        func payload(userId: String, frame: [UInt8]) -> [UInt8] {
            let user = JSONValue.string(userId).serialized()
            var bytes: [UInt8] = []
            bytes.reserveCapacity(head.count + user.count + tail.count + frame.count)
            bytes += head
            bytes += user
            bytes += tail
            bytes += frame
            return bytes
        }
    }

    func encoded() -> [UInt8] {
        Header(
            appId: appId, conversationId: conversationId, origin: origin,
            excludedUserId: excludedUserId, touchesSummary: touchesSummary
        ).payload(userId: userId, frame: frame)
    }

    /// nil for anything that is not such a payload (another version's, or damaged): the receiver drops it.
    init?(decoding bytes: [UInt8]) {
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")),
            case .object(let header)? = try? JSONValue.parse(Array(bytes[..<newline]), maxDepth: 2),
            let appId = header["a"]?.int64Value,
            case .string(let conversationId)? = header["c"],
            case .string(let userId)? = header["u"]
        else { return nil }
        self.appId = appId
        self.conversationId = conversationId
        self.userId = userId
        origin = header["o"]?.stringValue
        excludedUserId = header["x"]?.stringValue
        touchesSummary = header["s"] != nil
        frame = Array(bytes[(newline + 1)...])
    }

    init(
        appId: Int64, conversationId: String, userId: String, origin: String?, excludedUserId: String?,
        touchesSummary: Bool, frame: [UInt8]
    ) {
        self.appId = appId
        self.conversationId = conversationId
        self.userId = userId
        self.origin = origin
        self.excludedUserId = excludedUserId
        self.touchesSummary = touchesSummary
        self.frame = frame
    }
}

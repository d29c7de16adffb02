import ParleyBytes
import ParleyJSON
import ParleyMessaging

/// What one instance tells the others about an event, small enough for NOTIFY (payloads are limited to
/// 8,000 bytes): messages by id (the receiver loads them), everything else inline. Keys are one or two letters.
///
///   {"k":"m","a":APP,"id":MSG,"c":CONV,"x":1?,"ex":[USER...]?,"o":SESSION?}    message (x: membership changed)
///   {"k":"e","a":APP,"id":MSG,"c":CONV,"o":SESSION?}                           edit
///   {"k":"v","a":APP,"id":MSG,"c":CONV,"op":USER,"s":SEQ,"o":SESSION?}         revoke
///   {"k":"r","a":APP,"c":CONV,"u":USER,"s":SEQ,"to":"c"|"u","o":SESSION?}      read mark (to members / the reader)
///   {"k":"c","a":APP,"c":CONV,"u":USER,"p":CHANGE,"x":1?,"o":SESSION?}         the user's conversation change
///   {"k":"t","a":APP,"c":CONV,"u":USER}                                         typing
///   {"k":"u","a":APP,"c":"","us":[USER...],"t":TYPE,"p":DATA,"o":SESSION?}     a user event (friends, profiles)
///   {"k":"n","a":APP,"c":CONV,"t":TYPE,"p":DATA,"o":SESSION?}                  a conversation event (reactions, pins)
///   {"k":"o","a":APP,"c":CONV,"m":MESSAGE}                                     an online-only message, inline (never
///                                                                               stored, so nothing to load)
///   {"k":"p",...}                                                              presence (PresenceDescriptor: read by
///                                                                               the presence hub, not fan-out)
///   {"k":"g","a":APP,"c":CONV}                                                 the conversation's members changed
///                                                                               (routing relays only, which send
///                                                                               none of the above but "p": member
///                                                                               caches forget them)
enum RelayDescriptor {
    static let membersChangedKind = "g"

    static func membersChanged(appId: Int64, conversationId: String) -> JSONValue {
        .object(
            JSONObject([
                ("k", .string(membersChangedKind)), ("a", .number(JSONNumber(appId))), ("c", .string(conversationId)),
            ]))
    }

    /// A conversation change larger than this is relayed as `{"conversationId", "changed": true}`.
    static let maxInlineChangeBytes = 2000

    static func describe(_ event: MessagingEvent) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("a", .number(JSONNumber(event.appId))), ("c", .string(event.conversationId)),
        ]
        switch event.payload {
        case .message(let message) where event.onlineOnly:
            fields.insert(("k", "o"), at: 0)
            let json = event.messageJSON ?? message.jsonBytes()
            fields.append(("m", (try? JSONValue.parse(json)) ?? .null))
        case .message(let message):
            fields.insert(("k", "m"), at: 0)
            fields.append(("id", .string(message.id)))
            if event.membershipChanged { fields.append(("x", 1)) }
            if case .conversationMembersAnd(let extra) = event.audience {
                fields.append(("ex", .array(extra.map(JSONValue.string))))
            }
        case .edit(let message):
            fields.insert(("k", "e"), at: 0)
            fields.append(("id", .string(message.id)))
        case .revoke(let messageId, _, let operatorId, let seq):
            fields.insert(("k", "v"), at: 0)
            fields += [("id", .string(messageId)), ("op", .string(operatorId)), ("s", .number(JSONNumber(seq)))]
        case .read(_, let userId, let seq):
            fields.insert(("k", "r"), at: 0)
            let toUser: Bool
            if case .user = event.audience { toUser = true } else { toUser = false }
            fields += [("u", .string(userId)), ("s", .number(JSONNumber(seq))), ("to", .string(toUser ? "u" : "c"))]
        case .conversation(let change):
            fields.insert(("k", "c"), at: 0)
            if case .user(let userId) = event.audience { fields.append(("u", .string(userId))) }
            var inline = change
            if change.serialized().count > maxInlineChangeBytes {
                inline = .object(JSONObject([("conversationId", .string(event.conversationId)), ("changed", true)]))
            }
            fields.append(("p", inline))
            if event.membershipChanged { fields.append(("x", 1)) }
        case .userEvent(let kind, let data):
            fields.insert(("k", "u"), at: 0)
            fields += [("us", .array(recipients(event.audience).map(JSONValue.string))), ("t", .string(kind.rawValue))]
            fields.append(("p", data))
        case .conversationEvent(let kind, let data):
            fields.insert(("k", "n"), at: 0)
            fields += [("t", .string(kind.rawValue)), ("p", data)]
        }
        if let origin = event.origin { fields.append(("o", .string(origin))) }
        return .object(JSONObject(fields))
    }

    /// `describe(event).serialized()`, with a stored message (one per message sent) written straight to bytes
    /// instead of through a `JSONValue` tree.
    static func describeSerialized(_ event: MessagingEvent) -> [UInt8] {
        guard case .message(let message) = event.payload, case .conversationMembers = event.audience,
            !event.onlineOnly
        else {
            return describe(event).serialized()
        }
        var out: [UInt8] = []
        out.reserveCapacity(96 + event.conversationId.utf8.count)
        out.append(contentsOf: #"{"k":"m","a":"#.utf8)
        DecimalASCII.append(Int(event.appId), to: &out)
        out.append(contentsOf: #","c":"#.utf8)
        JSONString.append(event.conversationId, to: &out)
        out.append(contentsOf: #","id":"#.utf8)
        JSONString.append(message.id, to: &out)
        if event.membershipChanged { out.append(contentsOf: #","x":1"#.utf8) }
        if let origin = event.origin {
            out.append(contentsOf: #","o":"#.utf8)
            JSONString.append(origin, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A user event's audience, split so that each descriptor stays under the NOTIFY limit (a profile change goes to
    /// every friend; the data itself is bounded by the profile's limits).
    static func describeUserEvent(_ event: MessagingEvent) -> [[UInt8]] {
        let users = recipients(event.audience)
        let whole = describe(event).serialized()
        guard whole.count > PostgresRelay.maxPayloadBytes - 64, users.count > 1 else { return [whole] }
        var empty = event
        empty.audience = .users([])
        let budget = max(256, PostgresRelay.maxPayloadBytes - 64 - describe(empty).serialized().count)
        var parts: [[UInt8]] = []
        var chunk: [String] = []
        var size = 0
        for user in users {
            let cost = user.utf8.count + 3
            if !chunk.isEmpty && size + cost > budget {
                empty.audience = .users(chunk)
                parts.append(describe(empty).serialized())
                chunk.removeAll(keepingCapacity: true)
                size = 0
            }
            chunk.append(user)
            size += cost
        }
        empty.audience = .users(chunk)
        parts.append(describe(empty).serialized())
        return parts
    }

    private static func recipients(_ audience: MessagingEvent.Audience) -> [String] {
        switch audience {
        case .user(let user): [user]
        case .users(let users): users
        case .conversationMembers, .conversationMembersAnd: []
        }
    }

    static func typing(appId: Int64, conversationId: String, userId: String) -> JSONValue {
        .object(
            JSONObject([
                ("k", "t"), ("a", .number(JSONNumber(appId))), ("c", .string(conversationId)),
                ("u", .string(userId)),
            ]))
    }

    /// A descriptor from another instance, resolved into deliveries; message-based ones need `messages`
    /// (loaded in one query per notification by the relay).
    static func delivery(_ descriptor: JSONObject, messages: [String: IMMessage]) -> Delivery? {
        guard case .string(let kind)? = descriptor["k"], let appId = descriptor["a"]?.int64Value,
            case .string(let conversationId)? = descriptor["c"]
        else { return nil }
        let origin = descriptor["o"]?.stringValue
        let membershipChanged = descriptor["x"] != nil
        switch kind {
        case "m", "e", "v":
            guard let id = descriptor["id"]?.stringValue, let message = messages[id] else { return nil }
            var audience = MessagingEvent.Audience.conversationMembers
            if case .array(let extra)? = descriptor["ex"] {
                audience = .conversationMembersAnd(extra.compactMap(\.stringValue))
            }
            let payload: MessagingEvent.Payload
            switch kind {
            case "m": payload = .message(message)
            case "e": payload = .edit(message)
            default:
                payload = .revoke(
                    messageId: id, conversationId: conversationId,
                    operatorId: descriptor["op"]?.stringValue ?? message.revokedBy ?? "",
                    seq: descriptor["s"]?.int64Value ?? message.seq)
            }
            return Delivery(
                appId: appId, conversationId: conversationId, audience: audience, origin: origin,
                membershipChanged: membershipChanged, payload: payload)
        case "r":
            guard let userId = descriptor["u"]?.stringValue, let seq = descriptor["s"]?.int64Value else { return nil }
            let audience: MessagingEvent.Audience =
                descriptor["to"]?.stringValue == "u" ? .user(userId) : .conversationMembers
            return Delivery(
                appId: appId, conversationId: conversationId, audience: audience, origin: origin,
                excludedUserId: nil, membershipChanged: false, touchesSummary: true,
                frame: Delivery.frame(for: .read(conversationId: conversationId, userId: userId, seq: seq)))
        case "c":
            guard let userId = descriptor["u"]?.stringValue, let change = descriptor["p"] else { return nil }
            return Delivery(
                appId: appId, conversationId: conversationId, audience: .user(userId), origin: origin,
                excludedUserId: nil, membershipChanged: membershipChanged,
                frame: Delivery.frame(for: .conversation(change)))
        case "u":
            guard case .array(let users)? = descriptor["us"], let type = descriptor["t"]?.stringValue,
                let kind = UserEventKind(rawValue: type), let data = descriptor["p"]
            else { return nil }
            return Delivery(
                appId: appId, conversationId: conversationId, audience: .users(users.compactMap(\.stringValue)),
                origin: origin, excludedUserId: nil, membershipChanged: false,
                frame: Delivery.frame(for: .userEvent(kind, data)))
        case "n":
            guard let type = descriptor["t"]?.stringValue, let kind = ConversationEventKind(rawValue: type),
                let data = descriptor["p"]
            else { return nil }
            return Delivery(
                appId: appId, conversationId: conversationId, audience: .conversationMembers,
                origin: origin, excludedUserId: nil, membershipChanged: false,
                frame: Delivery.frame(for: .conversationEvent(kind, data)))
        case "o":
            guard case .object(let message)? = descriptor["m"] else { return nil }
            return Delivery(
                appId: appId, conversationId: conversationId, audience: .conversationMembers, origin: nil,
                excludedUserId: nil, membershipChanged: false,
                frame: ServerFrame.encoded(type: "message", json: .object(message)))
        case "t":
            guard let userId = descriptor["u"]?.stringValue else { return nil }
            return Delivery(
                appId: appId, conversationId: conversationId, audience: .conversationMembers,
                origin: nil, excludedUserId: userId, membershipChanged: false,
                frame: typingFrame(conversationId: conversationId, userId: userId))
        default:
            return nil
        }
    }

    static func typingFrame(conversationId: String, userId: String) -> [UInt8] {
        ServerFrame.encoded(
            type: "typing",
            json: .object(
                JSONObject([
                    ("conversationId", .string(conversationId)), ("userId", .string(userId)),
                ])))
    }
}

import ParleyJSON
import ParleyMessaging

/// One event ready to go out: the frame, encoded once, and who gets it.
struct Delivery: Sendable {
    var appId: Int64
    var conversationId: String
    var audience: MessagingEvent.Audience
    /// What caused it (`Principal.origin`): it got the answer and skips the echo.
    var origin: String?
    /// Typing notices skip all of the typer's own devices.
    var excludedUserId: String?
    var membershipChanged: Bool
    /// A message, revoke, edit or read: the recipients' conversation summaries changed (`ConversationNotifier`).
    var touchesSummary: Bool
    /// The encoded frame, or the event to encode once somebody online is to receive it.
    private var encoded: [UInt8]?
    private var payload: MessagingEvent.Payload?

    /// The message's JSON when the publisher wrote it already.
    private var messageJSON: [UInt8]?

    var frame: [UInt8] {
        if let encoded { return encoded }
        if let messageJSON, case .message = payload { return ServerFrame.encoded(type: "message", data: messageJSON) }
        return payload.map(Self.frame(for:)) ?? []
    }

    /// The frame for a messaging event (the same for local and relayed events).
    static func frame(for payload: MessagingEvent.Payload) -> [UInt8] {
        switch payload {
        case .message(let message):
            return ServerFrame.encoded(type: "message", data: message.jsonBytes())
        case .edit(let message):
            return ServerFrame.encoded(type: "edit", data: message.jsonBytes())
        case .revoke(let messageId, let conversationId, let operatorId, let seq):
            return ServerFrame.encoded(
                type: "revoke",
                json: .object(
                    JSONObject([
                        ("msgId", .string(messageId)), ("conversationId", .string(conversationId)),
                        ("operatorId", .string(operatorId)), ("seq", .number(JSONNumber(seq))),
                    ])))
        case .read(let conversationId, let userId, let seq):
            return ServerFrame.encoded(
                type: "read",
                json: .object(
                    JSONObject([
                        ("conversationId", .string(conversationId)), ("userId", .string(userId)),
                        ("seq", .number(JSONNumber(seq))),
                    ])))
        case .conversation(let change):
            return ServerFrame.encoded(type: "conversation", json: change)
        case .userEvent(let kind, let data):
            return ServerFrame.encoded(type: kind.rawValue, json: data)
        case .conversationEvent(let kind, let data):
            return ServerFrame.encoded(type: kind.rawValue, json: data)
        }
    }

    init(_ event: MessagingEvent) {
        appId = event.appId
        conversationId = event.conversationId
        audience = event.audience
        origin = event.origin
        excludedUserId = nil
        membershipChanged = event.membershipChanged
        payload = event.payload
        messageJSON = event.messageJSON
        // An online-only message changes no summary (it is in no history).
        touchesSummary = !event.onlineOnly && Self.touchesSummary(event.payload)
    }

    static func touchesSummary(_ payload: MessagingEvent.Payload) -> Bool {
        switch payload {
        case .conversation, .userEvent, .conversationEvent: return false
        case .message, .edit, .revoke, .read: return true
        }
    }

    init(
        appId: Int64, conversationId: String, audience: MessagingEvent.Audience, origin: String?,
        excludedUserId: String?, membershipChanged: Bool, touchesSummary: Bool = false, frame: [UInt8]
    ) {
        self.appId = appId
        self.conversationId = conversationId
        self.audience = audience
        self.origin = origin
        self.excludedUserId = excludedUserId
        self.membershipChanged = membershipChanged
        self.touchesSummary = touchesSummary
        encoded = frame
    }

    init(
        appId: Int64, conversationId: String, audience: MessagingEvent.Audience, origin: String?,
        membershipChanged: Bool, payload: MessagingEvent.Payload
    ) {
        self.appId = appId
        self.conversationId = conversationId
        self.audience = audience
        self.origin = origin
        excludedUserId = nil
        self.membershipChanged = membershipChanged
        self.payload = payload
        touchesSummary = Self.touchesSummary(payload)
    }
}

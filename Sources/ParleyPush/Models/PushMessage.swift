import ParleyJSON
import ParleyMessageModel

/// A stored message as the worker needs it to build pushes.
public struct PushMessage: Sendable, Equatable {
    public var id: Int64
    public var appId: Int64
    public var conversationId: String
    public var fromId: String
    public var chatType: String
    public var msgType: String
    /// JSON text (nil once revoked).
    public var content: String?
    public var revoked: Bool
    /// The sender's nickname, or their id when they have none.
    public var senderName: String
    /// The send's `push.title`, `push.body` and `push.sound` (`messages.push_options`): what the push says and plays
    /// instead of the defaults.
    public var pushTitle: String?
    public var pushBody: String?
    public var pushSound: String?

    public init(
        id: Int64, appId: Int64, conversationId: String, fromId: String, chatType: String, msgType: String,
        content: String?, revoked: Bool, senderName: String, pushTitle: String? = nil, pushBody: String? = nil,
        pushSound: String? = nil
    ) {
        self.pushTitle = pushTitle
        self.pushBody = pushBody
        self.pushSound = pushSound
        self.id = id
        self.appId = appId
        self.conversationId = conversationId
        self.fromId = fromId
        self.chatType = chatType
        self.msgType = msgType
        self.content = content
        self.revoked = revoked
        self.senderName = senderName
    }

    /// "audio" or "video" for a call message, nil for anything else.
    public var callMedia: String? { MessageType(rawValue: msgType)?.callMedia }

    /// The media of a call invitation, which rings the recipient's phone through a VoIP push; nil for anything
    /// else, call records included. A call message is a record (a normal alert, never a ring) when its content
    /// says how the call went: a `durationSec`, or a `status` other than an invitation's (`ended`, `missed`,
    /// `cancelled`, `rejected`, `completed`, ...). A call message with neither rings, as before.
    public var ringingMedia: String? {
        guard let media = callMedia else { return nil }
        guard let content, case .object(let object)? = try? JSONValue.parse(content) else { return media }
        if object["durationSec"] != nil { return nil }
        guard let status = object["status"] else { return media }
        return status.stringValue.map(Self.invitationStatuses.contains) == true ? media : nil
    }

    /// `status` values that mean the call is being placed (case as sent).
    static let invitationStatuses: Set<String> = ["calling", "ringing", "invite", "inviting", "incoming", "dialing"]
}

/// A device token of a recipient, as the worker selects them.
public struct PushTarget: Sendable, Hashable {
    public var userId: String
    public var vendor: PushVendor
    public var token: String
    public var environment: PushEnvironment
    /// '' = the app's configured bundle id.
    public var bundleId: String
    /// The language of the session that bound the token: what its alerts are written in.
    public var language: PreviewLanguage

    public init(
        userId: String, vendor: PushVendor, token: String, environment: PushEnvironment, bundleId: String,
        language: PreviewLanguage = .en
    ) {
        self.userId = userId
        self.vendor = vendor
        self.token = token
        self.environment = environment
        self.bundleId = bundleId
        self.language = language
    }
}

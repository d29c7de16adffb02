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

    public init(
        id: Int64, appId: Int64, conversationId: String, fromId: String, chatType: String, msgType: String,
        content: String?, revoked: Bool, senderName: String
    ) {
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

    /// Calls ring through VoIP pushes.
    public var callMedia: String? { MessageType(rawValue: msgType)?.callMedia }
}

/// A device token of a recipient, as the worker selects them.
public struct PushTarget: Sendable, Hashable {
    public var userId: String
    public var vendor: PushVendor
    public var token: String
    public var environment: PushEnvironment
    /// '' = the app's configured bundle id.
    public var bundleId: String

    public init(userId: String, vendor: PushVendor, token: String, environment: PushEnvironment, bundleId: String) {
        self.userId = userId
        self.vendor = vendor
        self.token = token
        self.environment = environment
        self.bundleId = bundleId
    }
}

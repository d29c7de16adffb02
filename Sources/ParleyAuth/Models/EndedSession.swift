/// A session that ended, as the realtime gateway needs it to notify and close the session's connections.
public struct EndedSession: Sendable, Hashable {
    public var sessionId: String
    public var userId: String
    public var appId: Int64
    public var reason: SessionEndReason
    /// For `accountConflict`: the model of the device that logged in (the "logged in on another device" notice).
    public var deviceModel: String?

    public init(sessionId: String, userId: String, appId: Int64, reason: SessionEndReason, deviceModel: String? = nil) {
        self.sessionId = sessionId
        self.userId = userId
        self.appId = appId
        self.reason = reason
        self.deviceModel = deviceModel
    }

    /// The `account_conflict` notice `{deviceModel, text}` the OpenIM-based clients show.
    public var conflictNotice: (deviceModel: String, text: String)? {
        guard reason == .accountConflict else { return nil }
        let model = deviceModel ?? ""
        let text =
            model.isEmpty
            ? "Your account was logged in on another device."
            : "Your account was logged in on another device (\(model))."
        return (model, text)
    }
}

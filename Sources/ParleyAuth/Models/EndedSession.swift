/// A session that ended, as the realtime gateway needs it to notify and close the session's connections.
public struct EndedSession: Sendable, Hashable {
    public var sessionId: String
    public var userId: String
    public var appId: Int64
    public var reason: SessionEndReason
    /// For `accountConflict`: the model of the device that logged in (the "logged in on another device" notice).
    public var deviceModel: String?
    /// The ended session's own language: its notice is written for the displaced user.
    public var language: SessionLanguage

    public init(
        sessionId: String, userId: String, appId: Int64, reason: SessionEndReason, deviceModel: String? = nil,
        language: SessionLanguage = .en
    ) {
        self.sessionId = sessionId
        self.userId = userId
        self.appId = appId
        self.reason = reason
        self.deviceModel = deviceModel
        self.language = language
    }

    /// The `account_conflict` notice `{deviceModel, text}` the OpenIM-based clients show, in the displaced
    /// session's language (seed 000 shows `text` as is).
    public var conflictNotice: (deviceModel: String, text: String)? {
        guard reason == .accountConflict else { return nil }
        let model = deviceModel ?? ""
        switch (language, model.isEmpty) {
        case (.en, true):
            return (model, "Your account was logged in on another device. If this was not you, change your password.")
        case (.en, false):
            return (
                model,
                "Your account was logged in on another device (\(model)). If this was not you, change your password."
            )
        case (.zh, true):
            return (model, "您的账号在另一台设备登录，如非本人请修改密码。")
        case (.zh, false):
            return (model, "您的账号在另一台设备（\(model)）登录，如非本人请修改密码。")
        }
    }
}

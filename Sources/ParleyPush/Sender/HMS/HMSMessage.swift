import ParleyJSON

/// The body of HMS Push Kit's `messages:send` for one push (pure): `{"validate_only": false, "message": {"token":
/// [token], "data", "android"}}`. Chat is a notification message (`android.notification` with title, body and
/// `click_action` type 3, opening the app; category IM); a call invitation (`Kind.voip`) is a data message at
/// `urgency` HIGH, category VOIP, which the app turns into its ringing screen. `data` is one JSON string, as Push Kit
/// takes it.
enum HMSMessage {
    static func body(for notification: PushNotification, now: Int) -> [UInt8] {
        let content = AndroidPushContent(apnsPayload: notification.payload)
        let ttl = "\(max(0, notification.expiration - now))s"
        var android: [(String, JSONValue)] = [("ttl", .string(ttl))]
        if notification.kind == .alert, content.isNotification {
            android.append(("category", "IM"))
            let body = content.body ?? ""
            var shown: [(String, JSONValue)] = [
                // Push Kit needs a title: without one (preview `none`) the body stands in.
                ("title", .string(content.title ?? body)),
                ("body", .string(body)),
                ("click_action", ["type": 3]),
                ("tag", .string(notification.collapseId)),
            ]
            if content.sound != nil { shown.append(("default_sound", true)) }
            android.append(("notification", .object(JSONObject(shown))))
        } else {
            android.append(("urgency", "HIGH"))
            android.append(("category", "VOIP"))
        }
        let message: [(String, JSONValue)] = [
            ("token", .array([.string(notification.token)])),
            ("data", .string(content.dataObject.serializedString)),
            ("android", .object(JSONObject(android))),
        ]
        return JSONValue.object(JSONObject([("validate_only", false), ("message", .object(JSONObject(message)))]))
            .serialized()
    }

    /// Push Kit's answer codes that matter here (Huawei's "Downlink Message Sending" result codes).
    enum Code {
        static let success = "80000000"
        /// Some tokens succeeded, the others are listed in `msg` (`illegal_tokens`).
        static let partialSuccess = "80100000"
        static let oauthAuthenticationError = "80200001"
        static let oauthTokenExpired = "80200003"
        /// Every token of the message is invalid.
        static let invalidTokens = "80300007"
        static let internalError = "81000001"
    }

    /// Whether the answer says the access token is no good (renew it and send again).
    static func refusesAccessToken(status: Int, body: [UInt8]) -> Bool {
        let code = (try? JSONValue.parse(body))?["code"]?.stringValue
        return status == 401 || code == Code.oauthTokenExpired || code == Code.oauthAuthenticationError
    }

    /// What a Push Kit answer means for a one-token message.
    static func outcome(status: Int, body: [UInt8], token: String) -> PushOutcome {
        let answer = try? JSONValue.parse(body)
        let code = answer?["code"]?.stringValue
        let reason =
            code.map { code in answer?["msg"]?.stringValue.map { "\(code) \($0)" } ?? code } ?? "HTTP \(status)"
        switch code {
        case Code.success?:
            return .delivered
        case Code.invalidTokens?:
            return .invalidToken(reason: reason)
        case Code.partialSuccess? where answer?["msg"]?.stringValue?.contains(token) == true:
            return .invalidToken(reason: reason)
        case Code.partialSuccess?:
            return .delivered
        case Code.internalError?, Code.oauthTokenExpired?, Code.oauthAuthenticationError?:
            return .retry(reason: reason)
        default:
            return status == 429 || (500...599).contains(status) ? .retry(reason: reason) : .rejected(reason: reason)
        }
    }
}

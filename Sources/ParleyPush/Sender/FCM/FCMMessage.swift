import ParleyJSON

/// The body of FCM HTTP v1's `projects.messages.send` for one push (pure): `{"message": {"token", "notification"?,
/// "data", "android"}}`. Chat is a notification message (title and body, shown by the system even when the app
/// is not running) carrying the message's ids as data; a call invitation (`Kind.voip`) is a data-only message at
/// high priority, which wakes the app to ring (FCM delivers high-priority data messages at once, even in Doze).
enum FCMMessage {
    static func body(for notification: PushNotification, now: Int) -> [UInt8] {
        let content = AndroidPushContent(apnsPayload: notification.payload)
        let ttl = "\(max(0, notification.expiration - now))s"
        var message: [(String, JSONValue)] = [("token", .string(notification.token))]
        var android: [(String, JSONValue)] = [("priority", "high"), ("ttl", .string(ttl))]
        if notification.kind == .alert, content.isNotification {
            var shown: [(String, JSONValue)] = []
            if let title = content.title { shown.append(("title", .string(title))) }
            shown.append(("body", .string(content.body ?? "")))
            message.append(("notification", .object(JSONObject(shown))))
            // The tag replaces, not repeats, a notification a retried push shows again.
            var androidNotification: [(String, JSONValue)] = [("tag", .string(notification.collapseId))]
            if let badge = content.badge {
                androidNotification.append(("notification_count", .number(JSONNumber(badge))))
            }
            if let sound = content.sound {
                androidNotification.append(sound == "default" ? ("default_sound", true) : ("sound", .string(sound)))
            }
            android.append(("notification", .object(JSONObject(androidNotification))))
        }
        message.append(("data", content.dataObject))
        message.append(("android", .object(JSONObject(android))))
        return JSONValue.object(JSONObject([("message", .object(JSONObject(message)))])).serialized()
    }

    /// What an FCM answer means (Firebase's "FCM error codes"): `UNREGISTERED` (404), an `INVALID_ARGUMENT` about
    /// the registration token (400) and `SENDER_ID_MISMATCH` (403: the token belongs to another project) end the
    /// token; 429 and 5xx are worth another try; anything else (a payload FCM refuses) is dropped.
    static func outcome(status: Int, body: [UInt8]) -> PushOutcome {
        if status == 200 { return .delivered }
        let error = (try? JSONValue.parse(body))?["error"]
        let grpcStatus = error?["status"]?.stringValue
        let details = error?["details"]?.arrayValue ?? []
        let errorCode = details.lazy.compactMap { $0["errorCode"]?.stringValue }.first
        let reason = errorCode ?? grpcStatus ?? "HTTP \(status)"
        if errorCode == "UNREGISTERED" || errorCode == "SENDER_ID_MISMATCH" { return .invalidToken(reason: reason) }
        if status == 400, errorCode == "INVALID_ARGUMENT" || grpcStatus == "INVALID_ARGUMENT",
            namesToken(error: error, details: details)
        {
            return .invalidToken(reason: "INVALID_ARGUMENT (registration token)")
        }
        switch status {
        case 404 where grpcStatus == "NOT_FOUND" && errorCode == nil:
            return .invalidToken(reason: reason) // an unregistered token answered without details
        case 429, 500...599:
            return .retry(reason: reason)
        default:
            return .rejected(reason: reason)
        }
    }

    /// Whether an INVALID_ARGUMENT is about the token, not the payload: a field violation on `message.token`, or
    /// FCM's message for a malformed token ("The registration token is not a valid FCM registration token").
    private static func namesToken(error: JSONValue?, details: [JSONValue]) -> Bool {
        let fields = details.flatMap { $0["fieldViolations"]?.arrayValue ?? [] }.compactMap { $0["field"]?.stringValue }
        if !fields.isEmpty { return fields.contains("message.token") }
        return error?["message"]?.stringValue?.lowercased().contains("registration token") == true
    }
}

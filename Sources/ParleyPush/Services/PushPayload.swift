import ParleyJSON
import ParleyMessageModel

/// The APNs payloads (pure), in the recipient device's language (en or zh).
///
/// - Alerts: the text as the app's preview setting allows (or the send's `push.title` / `push.body`), its
///   `push.sound` or `default`, `badge` (the recipient's total unread) and
///   `content-available: 1` (the app's background handler updates its state), and
///   `ext: {type: "chat", conversation_id, msg_id}` as seed 000's client reads it.
/// - VoIP (PushKit) pushes for call invitations, as TIMPush-based clients (seed 003) read them:
///   `voip_caller_name`, and `ext` as a JSON *string* holding `{voip_ext: {voip_media_type}}` (its values all
///   strings: the client casts it to `[String: String]`) beside the call's conversation, message and caller.
public enum PushPayload {
    /// What an alert says when the preview is `none`, or there is nothing to preview.
    public static func genericBody(_ language: PreviewLanguage) -> String {
        language == .zh ? "你有一条新消息" : "You have a new message"
    }

    /// The alert for `message` under `preview`, for a recipient with `badge` unread messages.
    public static func alert(
        for message: PushMessage, preview: PushPreview, badge: Int64, language: PreviewLanguage = .en
    ) -> [UInt8] {
        var alert: [(String, JSONValue)] = []
        switch preview {
        case .full:
            alert.append(("title", .string(message.senderName)))
            alert.append(("body", .string(previewText(message, language: language))))
        case .sender:
            alert.append(("title", .string(message.senderName)))
            alert.append(
                (
                    "body",
                    .string(
                        language == .zh
                            ? "\(message.senderName) 给你发来一条消息" : "\(message.senderName) sent you a message")
                ))
        case .none:
            alert.append(("body", .string(genericBody(language))))
        }
        // The sender's own words for the push (seed 003's "You have a new call") replace the defaults, whatever the
        // preview: they were written to be shown on the lock screen.
        if let title = message.pushTitle {
            alert.removeAll { $0.0 == "title" }
            alert.insert(("title", .string(title)), at: 0)
        }
        if let body = message.pushBody {
            alert.removeAll { $0.0 == "body" }
            alert.append(("body", .string(body)))
        }
        let payload: JSONValue = .object(
            JSONObject([
                (
                    "aps",
                    .object(
                        JSONObject([
                            ("alert", .object(JSONObject(alert))),
                            ("badge", .number(JSONNumber(max(0, badge)))),
                            ("sound", .string(message.pushSound ?? "default")),
                            // Wakes the app's background handler (seed 000 updates its badge there).
                            ("content-available", .number(JSONNumber(1))),
                            // Lets a notification service extension decrypt or enrich it.
                            ("mutable-content", .number(JSONNumber(1))),
                        ]))
                ),
                (
                    "ext",
                    .object(
                        JSONObject([
                            ("type", .string("chat")),
                            ("conversation_id", .string(message.conversationId)),
                            ("msg_id", .string(String(message.id))),
                        ]))
                ),
            ]))
        return payload.serialized()
    }

    /// The VoIP push of a call invitation (`media` is "audio" or "video"). Under the `none` preview the caller is
    /// neither named nor identified (the app finds the call by `msg_id`).
    public static func voip(
        for message: PushMessage, media: String, preview: PushPreview, language: PreviewLanguage = .en
    ) -> [UInt8] {
        // CallKit must show someone: under `none` a neutral caller. A `push.title` is what the caller chose to show.
        let caller =
            message.pushTitle ?? (preview == .none ? (language == .zh ? "来电" : "Incoming call") : message.senderName)
        var ext: [(String, JSONValue)] = [
            ("type", .string("call")),
            ("conversation_id", .string(message.conversationId)),
            ("msg_id", .string(String(message.id))),
        ]
        var payload: [(String, JSONValue)] = [
            ("aps", .object(JSONObject())),
            ("voip_caller_name", .string(caller)),
        ]
        if preview != .none {
            ext.append(("caller_id", .string(message.fromId)))
            payload.append(("voip_caller_id", .string(message.fromId)))
        }
        ext.append(("voip_ext", .object(JSONObject([("voip_media_type", .string(media))]))))
        payload.append(("msg_id", .string(String(message.id))))
        payload.append(("ext", .string(JSONValue.object(JSONObject(ext)).serializedString)))
        return JSONValue.object(JSONObject(payload)).serialized()
    }

    /// A call's VoIP push (signalling's calls, `push_jobs.call`), as seed 003's client reads it: `voip_caller_name`
    /// (CallKit's caller), and `ext` as a JSON *string* holding `voip_ext.voip_media_type` (strings only: the client
    /// casts it to `[String: String]`) beside `type: "call"`, `action`, `call_id`, `caller_id`, `media_type`,
    /// `timeout_seconds` and a cancel's `reason`. Sent to VoIP tokens for invites only (see `plan`); Android's data
    /// message carries the same fields for a cancel too. Under the `none` preview the caller is neither named nor
    /// identified (the app reads the call by `call_id`).
    public static func call(
        _ push: CallPush, callerName: String, preview: PushPreview, language: PreviewLanguage = .en
    ) -> [UInt8] {
        let caller = preview == .none ? (language == .zh ? "来电" : "Incoming call") : callerName
        var ext: [(String, JSONValue)] = [
            ("type", .string("call")),
            ("action", .string(push.action.rawValue)),
            ("call_id", .string(push.callId)),
        ]
        var payload: [(String, JSONValue)] = [
            ("aps", .object(JSONObject())),
            ("voip_caller_name", .string(caller)),
        ]
        if preview != .none {
            ext.append(("caller_id", .string(push.callerId)))
            payload.append(("voip_caller_id", .string(push.callerId)))
        }
        ext.append(("media_type", .string(push.mediaType)))
        ext.append(("timeout_seconds", .number(JSONNumber(push.timeoutSeconds))))
        if push.action == .cancel { ext.append(("reason", .string(push.reason))) }
        ext.append(("voip_ext", .object(JSONObject([("voip_media_type", .string(push.mediaType))]))))
        payload.append(("ext", .string(JSONValue.object(JSONObject(ext)).serializedString)))
        return JSONValue.object(JSONObject(payload)).serialized()
    }

    /// The alert of a call push ("Incoming audio call" for a user with no VoIP token, "Missed call" for anyone), which
    /// shares the call's collapse id: a missed call replaces the ringing alert. Same `ext` fields as the VoIP push.
    public static func callAlert(
        _ push: CallPush, callerName: String, preview: PushPreview, language: PreviewLanguage = .en
    ) -> [UInt8] {
        let video = push.mediaType == "video"
        let body: String
        switch (push.action, language) {
        case (.invite, .zh): body = video ? "视频通话邀请" : "语音通话邀请"
        case (.invite, _): body = video ? "Incoming video call" : "Incoming audio call"
        case (.cancel, .zh): body = "未接来电"
        case (.cancel, _): body = "Missed call"
        }
        var alert: [(String, JSONValue)] = []
        if preview != .none { alert.append(("title", .string(callerName))) }
        alert.append(("body", .string(body)))
        var ext: [(String, JSONValue)] = [
            ("type", .string("call")), ("action", .string(push.action.rawValue)), ("call_id", .string(push.callId)),
        ]
        if preview != .none { ext.append(("caller_id", .string(push.callerId))) }
        ext.append(("media_type", .string(push.mediaType)))
        return JSONValue.object(
            JSONObject([
                (
                    "aps",
                    .object(
                        JSONObject([
                            ("alert", .object(JSONObject(alert))),
                            ("sound", .string("default")),
                        ]))
                ),
                ("ext", .object(JSONObject(ext))),
            ])
        ).serialized()
    }

    /// Which pushes a call push's tokens get. An invite: VoIP tokens a VoIP push, APNs alert tokens of users without
    /// a VoIP token an alert. The end of the ringing: a "Missed call" alert to APNs alert tokens (none when the user
    /// answered or rejected it), and nothing to VoIP tokens, because a VoIP-based client reports every VoIP push as a
    /// new incoming call (seed 003's does, and iOS demands it), so a cancel would ring the phone again; an app woken
    /// by the invite reads `GET /api/calls` to end its ringing. FCM and HMS tokens get both as high-priority data
    /// messages, which Android apps read by `action`.
    public static func plan(for push: CallPush, tokens: [PushTarget]) -> [(PushTarget, PushNotification.Kind)] {
        var usersWithVoIP = Set<String>()
        for token in tokens where token.vendor == .apnsVoip { usersWithVoIP.insert(token.userId) }
        return tokens.compactMap { token in
            switch (token.vendor, push.action) {
            case (.fcm, _), (.hms, _), (.apnsVoip, .invite): (token, .voip)
            case (.apns, .invite) where !usersWithVoIP.contains(token.userId): (token, .alert)
            case (.apns, .cancel) where push.alertsMissedCall: (token, .alert)
            default: nil
            }
        }
    }

    /// "hello", "[image]", ... as conversation lists show it, in `language`.
    static func previewText(_ message: PushMessage, language: PreviewLanguage) -> String {
        guard let type = MessageType(rawValue: message.msgType) else { return genericBody(language) }
        let content = message.content.flatMap { try? JSONValue.parse($0) } ?? .null
        let text = MessagePreview.text(type: type, content: content, revoked: message.revoked, language: language)
        return text.isEmpty ? genericBody(language) : text
    }

    /// Which pushes a recipient's tokens get for `message`: call invitations go to VoIP tokens (or, for a user
    /// without any, as alerts to their APNs tokens) and, as high-priority data messages, to FCM and HMS tokens;
    /// everything else, call records included, as alerts to APNs, FCM and HMS tokens. VoIP tokens never get alerts
    /// (iOS terminates apps that receive VoIP pushes without reporting a call).
    public static func plan(for message: PushMessage, tokens: [PushTarget]) -> [(PushTarget, PushNotification.Kind)] {
        guard message.ringingMedia != nil else {
            return tokens.filter { $0.vendor != .apnsVoip }.map { ($0, .alert) }
        }
        var usersWithVoIP = Set<String>()
        for token in tokens where token.vendor == .apnsVoip { usersWithVoIP.insert(token.userId) }
        return tokens.compactMap { token in
            switch token.vendor {
            case .apnsVoip, .fcm, .hms: (token, .voip)
            case .apns where !usersWithVoIP.contains(token.userId): (token, .alert)
            default: nil
            }
        }
    }
}

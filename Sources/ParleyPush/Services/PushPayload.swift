import ParleyJSON
import ParleyMessageModel

/// The APNs payloads (pure). Ordinary messages are alerts whose text respects the app's preview setting, with
/// `ext: {type: "chat", conversation_id, msg_id}` as the iOS client reads it; calls are PushKit VoIP pushes with
/// `voip_caller_name` and `ext.voip_ext.voip_media_type` (the TIMPush-style fields the client's CallKit code reads).
public enum PushPayload {
    public static let genericBody = "You have a new message"

    /// The alert for `message` under `preview`.
    public static func alert(for message: PushMessage, preview: PushPreview) -> [UInt8] {
        var alert: [(String, JSONValue)] = []
        switch preview {
        case .full:
            alert.append(("title", .string(message.senderName)))
            alert.append(("body", .string(previewText(message))))
        case .sender:
            alert.append(("title", .string(message.senderName)))
            alert.append(("body", .string("\(message.senderName) sent you a message")))
        case .none:
            alert.append(("body", .string(genericBody)))
        }
        let payload: JSONValue = .object(
            JSONObject([
                (
                    "aps",
                    .object(
                        JSONObject([
                            ("alert", .object(JSONObject(alert))),
                            ("sound", .string("default")),
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

    /// The VoIP push of a call message (`callMedia` is "audio" or "video").
    public static func voip(for message: PushMessage, media: String, preview: PushPreview) -> [UInt8] {
        // CallKit must show someone: under `none` a neutral caller.
        let caller = preview == .none ? "Incoming call" : message.senderName
        let payload: JSONValue = .object(
            JSONObject([
                ("aps", .object(JSONObject())),
                ("voip_caller_name", .string(caller)),
                (
                    "ext",
                    .object(
                        JSONObject([
                            ("type", .string("call")),
                            ("conversation_id", .string(message.conversationId)),
                            ("msg_id", .string(String(message.id))),
                            ("voip_ext", .object(JSONObject([("voip_media_type", .string(media))]))),
                        ]))
                ),
            ]))
        return payload.serialized()
    }

    /// "hello", "[image]", ... as conversation lists show it.
    static func previewText(_ message: PushMessage) -> String {
        guard let type = MessageType(rawValue: message.msgType) else { return genericBody }
        let content = message.content.flatMap { try? JSONValue.parse($0) } ?? .null
        let text = MessagePreview.text(type: type, content: content, revoked: message.revoked)
        return text.isEmpty ? genericBody : text
    }

    /// Which pushes a recipient's tokens get for `message`: calls go to VoIP tokens (or, for a user without any,
    /// as alerts to their APNs tokens); everything else as alerts to APNs tokens. VoIP tokens never get alerts
    /// (iOS terminates apps that receive VoIP pushes without reporting a call).
    public static func plan(for message: PushMessage, tokens: [PushTarget]) -> [(PushTarget, PushNotification.Kind)] {
        guard message.callMedia != nil else {
            return tokens.filter { $0.vendor == .apns }.map { ($0, .alert) }
        }
        var usersWithVoIP = Set<String>()
        for token in tokens where token.vendor == .apnsVoip { usersWithVoIP.insert(token.userId) }
        return tokens.compactMap { token in
            switch token.vendor {
            case .apnsVoip: (token, .voip)
            case .apns where !usersWithVoIP.contains(token.userId): (token, .alert)
            default: nil
            }
        }
    }
}

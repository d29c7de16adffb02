import ParleyJSON

/// Server events (docs/protocol.md, "Server → client events") and the sync changes that stand for them.
///
/// Live events carry no cursor, so the sync after a reconnect repeats the changes since the last sync answer,
/// some of which arrived live already. Every change is therefore applied idempotently: a message once per id, a
/// revoke once per message, an edit once per message and edit time, a read mark once per position.
extension ChatSession {
    func handle(_ type: String, _ data: JSONValue) async {
        switch type {
        case "message":
            guard let message = try? ChatMessage(json: data) else { return }
            await received(message)
        case "edit":
            guard let message = try? ChatMessage(json: data),
                firstSighting(of: "edit \(message.id) \(message.editedAt ?? 0)")
            else { return }
            let label = await label(of: message.conversationId)
            console.say(
                "[\(label)] \(await nickname(of: message.fromId)) edited #\(message.id): "
                    + MessageFormatter.body(of: message))
        case "revoke":
            guard let conversationId = data["conversationId"]?.stringValue, let msgId = data["msgId"]?.stringValue,
                firstSighting(of: "revoke \(msgId)")
            else { return }
            let operatorId = data["operatorId"]?.stringValue ?? "?"
            console.say("[\(await label(of: conversationId))] \(await nickname(of: operatorId)) revoked #\(msgId)")
        case "read":
            // 1:1 read receipts from the peer; our own reads on other devices need no line.
            guard let conversationId = data["conversationId"]?.stringValue, let userId = data["userId"]?.stringValue,
                userId != me.userId,
                firstSighting(of: "read \(conversationId) \(userId) \(data["seq"]?.description ?? "")")
            else { return }
            console.say(
                "[\(await label(of: conversationId))] \(await nickname(of: userId)) read up to seq "
                    + (data["seq"]?.description ?? "?"))
        case "typing":
            guard let conversationId = data["conversationId"]?.stringValue, conversationId == open?.conversationId,
                let userId = data["userId"]?.stringValue
            else { return }
            console.say("[\(await label(of: conversationId))] \(await nickname(of: userId)) is typing…")
        case "conversation", "membership":
            guard data["removed"]?.boolValue == true, let conversationId = data["conversationId"]?.stringValue else {
                return
            }
            console.say("[\(await label(of: conversationId))] you are no longer in this group")
            if open?.conversationId == conversationId { open = nil }
        case "account_conflict":
            console.warn(
                "logged out: "
                    + MessageFormatter.printable(data["text"]?.stringValue ?? "another login on this platform"))
        case "session_ended":
            console.warn("session ended (\(data["reason"]?.stringValue ?? "?")): log in again")
        case "token_expired":
            console.warn("the IM token expired; renewing it")
        case "error":
            console.warn("server error frame: \(data)")
        default:
            break // events of later protocol versions: ignore what we do not know
        }
    }

    /// A new message, live or from sync: printed once, counted for `--wait-for` when someone else sent it, and
    /// marked read when it arrives in the open conversation.
    func received(_ message: ChatMessage) async {
        guard firstSighting(of: message.id) else { return }
        let label = await label(of: message.conversationId)
        console.say(MessageFormatter.line(label: label, sender: await nickname(of: message.fromId), message: message))
        guard message.fromId != me.userId else { return } // our own, sent from another device
        if !message.revoked, ["file", "image", "video", "audio"].contains(message.msgType),
            let key = message.content["objectKey"]?.stringValue
        {
            // Recipients get their own signed URL for files sent to them.
            if let url = try? await api.signedURLs(for: [key])[key] { console.say("    ↳ \(url)") }
        }
        if open?.conversationId == message.conversationId { markRead(message.conversationId, seq: message.seq) }
        countReceived()
    }

    /// Sends `read` without waiting for the answer: a read mark is a hint, the next one repeats it.
    func markRead(_ conversationId: String, seq: Int64) {
        guard let connection else { return }
        Task {
            _ = try? await connection.request(
                "read", ["conversationId": .string(conversationId), "seq": .number(JSONNumber(seq))])
        }
    }

    /// A sync change is the event it stands for (`SyncChange` in openapi.yaml).
    func applySyncChange(_ change: JSONValue) async {
        guard let type = change["type"]?.stringValue else { return }
        switch type {
        case "message", "edit":
            await handle(type, change["message"] ?? .null)
        default:
            await handle(type, change)
        }
    }
}

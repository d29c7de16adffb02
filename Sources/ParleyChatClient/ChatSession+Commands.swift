import Glibc
import ParleyJSON

/// What each chat command does: REST for lists, history and uploads; WebSocket requests (`send`, `revoke`,
/// `edit`, `read`) for everything that changes a conversation, each waiting for its `ack`.
extension ChatSession {
    /// Runs one command; a failure is printed (and counted), never thrown: the chat goes on.
    public func run(_ command: ChatCommand) async {
        do {
            try await execute(command)
        } catch {
            failures += 1
            console.warn("error: \(error)")
        }
    }

    private func execute(_ command: ChatCommand) async throws {
        switch command {
        case .help:
            console.say(ChatCommand.helpText)
        case .whoami:
            console.say("you are \(me.username ?? me.nickname), user id \(me.userId), session \(me.sessionId)")
        case .quit:
            break // the program ends the session
        case .list:
            try await list()
        case .open(let target):
            try await openConversation(target)
        case .history(let limit):
            try await history(limit: limit)
        case .send(let text):
            try await send(msgType: "text", content: .string(text))
        case .upload(let path):
            try await upload(path)
        case .revoke(let messageId):
            let id = try messageId ?? lastSent()
            let revoked = try ChatMessage(json: try await liveConnection().request("revoke", ["msgId": .string(id)]))
            console.say("[\(await label(of: revoked.conversationId))] you revoked #\(revoked.id)")
        case .edit(let messageId, let text):
            let id = try messageId ?? lastSent()
            let data: JSONValue = ["msgId": .string(id), "content": .string(text)]
            let edited = try ChatMessage(json: try await liveConnection().request("edit", data))
            console.say(
                MessageFormatter.line(
                    label: await label(of: edited.conversationId), sender: me.nickname, message: edited))
        }
    }

    private func lastSent() throws(ChatUsageError) -> String {
        guard let id = lastSentMessageId else {
            throw ChatUsageError("nothing sent in this session yet: give a message id")
        }
        return id
    }

    private func openConversation() throws(ChatUsageError) -> OpenConversation {
        guard let open else {
            throw ChatUsageError("no conversation is open: /open a user id, a group or a /list number")
        }
        return open
    }

    // MARK: Conversations

    private func list() async throws {
        lastList = try await api.conversations()
        if lastList.isEmpty { console.say("no conversations yet: /open a user id to start one") }
        for (index, conversation) in lastList.enumerated() {
            let label = conversation.chatType == "group" ? "#" + conversation.showName : conversation.showName
            labels[conversation.conversationId] = MessageFormatter.printable(label)
            let unread = conversation.unreadCount > 0 ? "  \(conversation.unreadCount) unread" : ""
            console.say(
                "\(index + 1). \(MessageFormatter.printable(label))  (\(conversation.conversationId))\(unread)  "
                    + MessageFormatter.printable(conversation.lastMessagePreview))
        }
    }

    private func openConversation(_ target: ConversationTarget) async throws {
        let conversation: OpenConversation
        switch target {
        case .listIndex(let number):
            guard lastList.indices.contains(number - 1) else {
                throw ChatUsageError("no line \(number) in the last /list")
            }
            let summary = lastList[number - 1]
            let toId = summary.chatType == "group" ? summary.groupId : summary.peerUserId
            conversation = OpenConversation(
                conversationId: summary.conversationId, toId: toId ?? "",
                chatType: summary.chatType, label: await label(of: summary.conversationId))
        case .user(let userId):
            conversation = try await singleConversation(with: userId)
        case .group(let groupId):
            let summary = try await api.conversation(ConversationID.group(groupId)) // 1100 when not a member
            labels[summary.conversationId] = "#" + MessageFormatter.printable(summary.showName)
            conversation = OpenConversation(
                conversationId: summary.conversationId, toId: groupId, chatType: "group",
                label: "#" + MessageFormatter.printable(summary.showName))
        case .conversation(let id):
            guard let peer = ConversationID.peer(of: id, me: me.userId) else {
                throw ChatUsageError("\(id) is not one of your conversations")
            }
            conversation = try await singleConversation(with: peer)
        }
        open = conversation
        console.say("opened [\(conversation.label)] (\(conversation.conversationId)); type a line to send it")
        try await history(limit: 10)
    }

    /// A 1:1 conversation exists from its first message on; the user must exist now.
    private func singleConversation(with userId: String) async throws -> OpenConversation {
        if userId != me.userId {
            let found = try await api.nicknames(of: [userId])
            guard found[userId] != nil else { throw ChatUsageError("no user \(userId) in this app") }
        }
        let id = ConversationID.single(me.userId, userId)
        return OpenConversation(conversationId: id, toId: userId, chatType: "single", label: await label(of: id))
    }

    /// The latest messages of the open conversation (REST), then a read mark up to the last one.
    private func history(limit: Int) async throws {
        let open = try openConversation()
        var messages: [ChatMessage] = []
        do {
            messages = try await api.messages(in: open.conversationId, limit: limit)
        } catch {
            guard error.code == 1101 else { throw error } // 1101: a 1:1 conversation before its first message
        }
        if messages.isEmpty { console.say("no messages yet") }
        for message in messages {
            _ = firstSighting(of: message.id)
            console.say(
                MessageFormatter.line(label: open.label, sender: await nickname(of: message.fromId), message: message))
        }
        if let last = messages.last { markRead(open.conversationId, seq: last.seq) }
    }

    // MARK: Sending

    /// `send` over the WebSocket, waiting for the `ack` (the stored message, with its id and seq). When the
    /// connection drops before the answer, the same request goes again on the next connection with the same
    /// `clientMsgId`: the server stores it once and answers the original.
    private func send(msgType: String, content: JSONValue) async throws {
        let open = try openConversation()
        let request: JSONValue = [
            "toId": .string(open.toId), "chatType": .string(open.chatType),
            "msgType": .string(msgType), "content": content,
            "clientMsgId": .string(Self.newClientMessageId()),
        ]
        var attempt = 1
        while true {
            let answer: JSONValue
            do {
                answer = try await liveConnection().request("send", request)
            } catch {
                guard case .transport(let why) = error, attempt < 3 else { throw error }
                console.warn("send not confirmed (\(why)); trying again")
                attempt += 1
                continue
            }
            let stored = try ChatMessage(json: answer)
            _ = firstSighting(of: stored.id)
            lastSentMessageId = stored.id
            console.say(MessageFormatter.line(label: open.label, sender: me.nickname, message: stored))
            return
        }
    }

    /// Uploads the file (REST, streamed), prints its signed URL, and sends it as an image message when it is a PNG,
    /// GIF or JPEG whose size we can read, as a file message otherwise.
    private func upload(_ path: String) async throws {
        _ = try openConversation()
        let file = try await api.upload(path: path)
        console.say(
            "uploaded \(MessageFormatter.printable(file.name)) (\(file.size) bytes, \(file.mimeType), sha256 \(file.hash))"
        )
        console.say("signed URL (until \(file.urlExpireAt)): \(file.url)")
        if file.mimeType.hasPrefix("image/"), let size = ImageDimensions.of(Self.head(of: path)) {
            try await send(
                msgType: "image",
                content: [
                    "objectKey": .string(file.objectKey), "width": .number(JSONNumber(size.width)),
                    "height": .number(JSONNumber(size.height)), "name": .string(file.name),
                ])
        } else {
            try await send(
                msgType: "file",
                content: [
                    "objectKey": .string(file.objectKey), "name": .string(file.name),
                    "size": .number(JSONNumber(file.size)),
                ])
        }
    }

    /// The first 64 KiB of a file (enough for an image's size).
    private static func head(of path: String) -> [UInt8] {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { Glibc.close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64 * 1024)
        let count = read(fd, &bytes, bytes.count)
        return Array(bytes.prefix(max(0, count)))
    }
}

import ParleyCrypto
import ParleyJSON

/// A logged-in chat: the WebSocket (kept open, reconnected, caught up through sync), the open conversation, and
/// the names it prints. Commands (`ChatSession+Commands.swift`) and server events (`ChatSession+Events.swift`) both
/// run here; the actor runs one at a time between suspension points, so live messages print while an upload or a
/// history load is waiting for the server.
public actor ChatSession {
    /// The conversation plain lines go to.
    struct OpenConversation {
        var conversationId: String
        /// The recipient of sends: the peer's user id, or the group id.
        var toId: String
        var chatType: String
        var label: String
    }

    let api: ParleyAPI
    let me: AuthSession
    let server: ServerAddress
    let console: Console

    /// The live connection; nil while (re)connecting.
    var connection: IMConnection?
    var everConnected = false
    var shuttingDown = false
    /// The sync position: nil until the first `sync` takes it (docs/protocol.md, "Sync after reconnect").
    var cursor: String?
    var open: OpenConversation?
    var lastList: [ConversationSummary] = []
    var lastSentMessageId: String?
    /// Conversation id -> label (`alice`, `#team`), user id -> nickname.
    var labels: [String: String] = [:]
    var nicknames: [String: String] = [:]
    /// Changes already printed (message ids, "revoke ID", ...): a change can come twice, live and through the sync
    /// after a reconnect. Bounded: the oldest are forgotten past 10,000.
    var seen = Set<String>()
    var seenOrder: [String] = []
    /// Messages from others that arrived (live or through sync), for `--wait-for`.
    var received = 0
    var receivedWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// Commands that failed (for the exit status of scripted sessions).
    var failures = 0

    public init(api: ParleyAPI, me: AuthSession, server: ServerAddress, console: Console) {
        self.api = api
        self.me = me
        self.server = server
        self.console = console
        nicknames[me.userId] = me.nickname
    }

    public var failedCommands: Int { failures }

    /// A line that was not a command counts as a failed command.
    public func recordFailure() { failures += 1 }

    // MARK: The connection

    /// Connects, catches up, prints events until the connection ends, and reconnects with back-off (0.5 s doubling
    /// to 10 s) after anything but a terminal close. Returns only when reconnecting is pointless (the session ended,
    /// another login displaced it, the token was refused) or after `shutdown()`, with the reason.
    public func maintainConnection() async -> String {
        var token = me.imToken
        var attempts = 0
        while !shuttingDown {
            do {
                let connection = try await IMConnection.open(server: server, token: token)
                attempts = 0
                self.connection = connection
                console.warn(
                    everConnected ? "reconnected" : "connected to \(server)/ws (session \(connection.hello.sessionId))")
                everConnected = true
                await catchUp(connection)
                var ending = IMCloseReason.lost("no close")
                for await event in connection.events {
                    switch event {
                    case .event(let type, let data): await handle(type, data)
                    case .closed(let reason): ending = reason
                    }
                }
                self.connection = nil
                if shuttingDown { return "closed" }
                guard ending.shouldReconnect else { return "disconnected: \(ending)" }
                console.warn("disconnected: \(ending); reconnecting")
                if case .server(4002, _) = ending { token = try await api.renewIMToken() } // the IM token expired
            } catch IMConnectionError.rejected(_, 1031, _) {
                // The IM token expired while we were away: renew it, then connect again after the back-off.
                if let renewed = try? await api.renewIMToken() { token = renewed }
            } catch IMConnectionError.rejected(let status, let code, let message) where status == 401 || status == 403 {
                return "the server refused the connection: \(message) (code \(code))" // log in again
            } catch let error as ParleyAPIError where [1030, 1034, 1037].contains(error.code ?? 0) {
                return "the session ended: \(error)"
            } catch {
                if attempts == 0 { console.warn("cannot connect: \(error); retrying") }
            }
            attempts += 1
            let backoff = min(10_000, 500 << min(attempts - 1, 5))
            try? await Task.sleep(for: .milliseconds(backoff + Int.random(in: 0...(backoff / 4))))
        }
        return "closed"
    }

    /// Brings this client up to date after (re)connecting: `sync` from the cursor, page by page, each change
    /// printed like the live event it stands for. The first sync has no cursor: it answers none and the cursor of
    /// "now", from which every later change comes.
    func catchUp(_ connection: IMConnection) async {
        do {
            var hasMore = true
            while hasMore {
                var request: JSONObject = ["limit": 200]
                if let cursor { request["cursor"] = .string(cursor) }
                let page = try await connection.request("sync", .object(request))
                for change in page["changes"]?.arrayValue ?? [] { await applySyncChange(change) }
                cursor = page["cursor"]?.stringValue ?? cursor
                hasMore = page["hasMore"]?.boolValue ?? false
            }
        } catch  where error.code == 1114 || error.code == 1116 {
            // The cursor is unusable (pruned after 30 days): start again from now; /history shows what came before.
            console.warn("sync cursor refused (\(error)); missed changes are in /history")
            cursor = nil
            await catchUp(connection)
        } catch {
            console.warn("sync failed: \(error)")
        }
    }

    /// The connection, waiting up to `timeout` for a (re)connect in progress.
    func liveConnection(timeout: Duration = .seconds(15)) async throws(ParleyAPIError) -> IMConnection {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            if let connection { return connection }
            guard clock.now < deadline, !shuttingDown else { throw .transport("not connected to \(server)/ws") }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Closes the WebSocket (close handshake, at most about two seconds) and logs out, so that no session of this
    /// run stays behind on the server.
    public func shutdown() async {
        shuttingDown = true
        if let connection {
            connection.close()
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(3)
            while self.connection != nil && clock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        }
        try? await api.logout()
    }

    /// Returns once `count` messages from others have arrived.
    public func waitForReceived(_ count: Int) async {
        if received >= count { return }
        await withCheckedContinuation { receivedWaiters.append((count, $0)) }
    }

    func countReceived() {
        received += 1
        let ready = receivedWaiters.filter { $0.count <= received }
        receivedWaiters.removeAll { $0.count <= received }
        for waiter in ready { waiter.continuation.resume() }
    }

    // MARK: Names

    /// Remembers a printed change; false when it was printed already.
    func firstSighting(of change: String) -> Bool {
        guard seen.insert(change).inserted else { return false }
        seenOrder.append(change)
        if seenOrder.count > 10_000 {
            seen.remove(seenOrder.removeFirst())
        }
        return true
    }

    func nickname(of userId: String) async -> String {
        if let known = nicknames[userId] { return known }
        if let found = try? await api.nicknames(of: [userId]) { nicknames.merge(found) { $1 } }
        return nicknames[userId] ?? userId
    }

    /// How a conversation is shown: the peer's nickname for 1:1, `#name` for a group.
    func label(of conversationId: String) async -> String {
        if let known = labels[conversationId] { return known }
        let label: String
        if let peer = ConversationID.peer(of: conversationId, me: me.userId) {
            label = await nickname(of: peer)
        } else if let summary = try? await api.conversation(conversationId) {
            label = "#" + summary.showName
        } else {
            label = conversationId
        }
        labels[conversationId] = label
        return label
    }

    /// A fresh `clientMsgId`: the server stores a message once per id, so a send can be repeated safely.
    static func newClientMessageId() -> String {
        "chat-" + Base64URL.encode(SecureRandom.bytes(16))
    }
}

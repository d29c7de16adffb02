import Foundation
import ParleyPostgres

/// A live server, one app and registered users, with helpers that speak the messaging API.
public struct MessagingFixture: Sendable {
    public let live: LiveApp
    public let appKey: String
    public let appId: Int64
    /// The app's secret, for signed server-to-server calls.
    public let secret: String
    public let client: TestClient

    /// `client`: the live server's default client unless given (one with a longer timeout, say).
    public init(live: LiveApp, appKey: String, appId: Int64, secret: String = "", client: TestClient? = nil) {
        self.live = live
        self.appKey = appKey
        self.appId = appId
        self.secret = secret
        self.client = client ?? live.client()
    }

    public static func run<T>(environment: [String: String] = [:], _ body: (MessagingFixture) async throws -> T)
        async throws -> T
    {
        try await withLiveApp(environment: environment) { live in
            let (app, secret) = try await live.createApp(name: "Messaging")
            return try await body(MessagingFixture(live: live, appKey: app.appKey, appId: app.id, secret: secret))
        }
    }

    /// Registers `count` users named `<prefix>0`, `<prefix>1`, ...
    public func users(_ count: Int, prefix: String = "user") async throws -> [Session] {
        var sessions: [Session] = []
        for index in 0..<count {
            sessions.append(try Session(try await client.register(appKey: appKey, username: "\(prefix)\(index)")))
        }
        return sessions
    }

    public var database: PostgresClient { live.app.database }

    // MARK: Files

    /// Uploads a small file as `session` (`PUT /api/files`) and returns its object key, for messages that
    /// reference files (the server checks every key).
    public func uploadKey(_ session: Session, bytes: [UInt8] = Array("attachment \(UUID().uuidString)".utf8))
        async throws -> String
    {
        let response = try await client.send(
            "PUT", "/api/files", headers: ["Authorization": "Bearer \(session.accessToken)"],
            body: bytes)
        guard response.status == 201, let key = response.string("objectKey") else {
            throw TestFailure("upload failed: \(response.status) \(response.text)")
        }
        return key
    }

    // MARK: Messages

    /// A message's `content` parsed back into the JSON object it holds as text (structured types go out as a string).
    public static func contentObject(_ message: Any?) -> [String: Any]? {
        guard let text = (message as? [String: Any])?["content"] as? String else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    public func send(
        _ from: Session, to toId: String, chatType: String = "single", msgType: String = "text",
        content: Any = "hello", extra: Any? = nil, clientMsgId: String? = UUID().uuidString
    ) async throws -> TestResponse {
        var body: [String: Any] = ["toId": toId, "chatType": chatType, "msgType": msgType, "content": content]
        if let clientMsgId { body["clientMsgId"] = clientMsgId }
        if let extra { body["extra"] = extra }
        return try await client.post("/api/im/messages", json: body, token: from.accessToken)
    }

    /// Sends and requires success; returns the stored message.
    @discardableResult
    public func sendOK(
        _ from: Session, to toId: String, chatType: String = "single", msgType: String = "text",
        content: Any = "hello", clientMsgId: String = UUID().uuidString
    ) async throws -> [String: Any] {
        let response = try await send(
            from, to: toId, chatType: chatType, msgType: msgType, content: content,
            clientMsgId: clientMsgId)
        guard response.status == 201 || response.status == 200 else {
            throw TestFailure("send failed: \(response.status) \(response.text)")
        }
        return response.data
    }

    public func history(_ session: Session, _ conversationId: String, query: String = "") async throws -> TestResponse {
        try await client.get("/api/im/conversations/\(conversationId)/messages\(query)", token: session.accessToken)
    }

    public func historySeqs(_ session: Session, _ conversationId: String, query: String = "") async throws -> [Int] {
        let response = try await history(session, conversationId, query: query)
        guard response.status == 200 else { throw TestFailure("history failed: \(response.status) \(response.text)") }
        return (response.data["messages"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }
    }

    public func conversations(_ session: Session) async throws -> [[String: Any]] {
        let response = try await client.get("/api/im/conversations", token: session.accessToken)
        guard response.status == 200 else { throw TestFailure("list failed: \(response.status) \(response.text)") }
        return response.data["conversations"] as? [[String: Any]] ?? []
    }

    public func conversation(_ session: Session, _ conversationId: String) async throws -> [String: Any]? {
        try await conversations(session).first { $0["conversationId"] as? String == conversationId }
    }

    public func createGroup(_ owner: Session, name: String = "Team", members: [Session]) async throws -> (
        groupId: String, conversationId: String
    ) {
        let response = try await client.post(
            "/api/im/groups", json: ["name": name, "memberIds": members.map(\.userId)],
            token: owner.accessToken)
        guard response.status == 201, let groupId = response.string("groupId"),
            let conversationId = response.string("conversationId")
        else {
            throw TestFailure("create group failed: \(response.status) \(response.text)")
        }
        return (groupId, conversationId)
    }

    public static func singleID(_ a: Session, _ b: Session) -> String {
        Array(a.userId.utf8).lexicographicallyPrecedes(Array(b.userId.utf8))
            ? "si:\(a.userId):\(b.userId)"
            : "si:\(b.userId):\(a.userId)"
    }

    public func messageCount() async throws -> Int {
        try await database.query("SELECT count(*) AS n FROM messages")[0].decode("n", as: Int.self)
    }

    public func sync(_ session: Session, cursor: String?, limit: Int = 200) async throws -> (
        changes: [[String: Any]], cursor: String, hasMore: Bool
    ) {
        var target = "/api/im/sync?limit=\(limit)"
        if let cursor { target += "&cursor=\(cursor)" }
        let response = try await client.get(target, token: session.accessToken)
        guard response.status == 200, let next = response.string("cursor") else {
            throw TestFailure("sync failed: \(response.status) \(response.text)")
        }
        return (response.data["changes"] as? [[String: Any]] ?? [], next, response.data["hasMore"] as? Bool ?? false)
    }

    /// Syncs page by page until `hasMore` is false.
    public func syncAll(_ session: Session, from cursor: String, pageSize: Int = 200) async throws -> (
        changes: [[String: Any]], cursor: String
    ) {
        var all: [[String: Any]] = []
        var cursor = cursor
        for _ in 0..<1000 {
            let page = try await sync(session, cursor: cursor, limit: pageSize)
            all += page.changes
            cursor = page.cursor
            if !page.hasMore { return (all, cursor) }
        }
        throw TestFailure("sync did not finish in 1000 pages")
    }

    /// Syncs until at least `count` changes arrived. A change becomes visible to sync once every transaction
    /// that started before it ended, anywhere on the cluster (other tests run alongside), hence the waiting.
    public func syncUntil(
        _ session: Session, from cursor: String, count: Int, pageSize: Int = 200,
        timeout: Duration = .seconds(20)
    ) async throws -> (changes: [[String: Any]], cursor: String) {
        try await syncUntil(session, from: cursor, pageSize: pageSize, timeout: timeout) { $0.count >= count }
    }

    /// Syncs until the changes gathered satisfy `done` (or `timeout` passes): for a test that waits for one
    /// particular change among others that may become visible first.
    public func syncUntil(
        _ session: Session, from cursor: String, pageSize: Int = 200, timeout: Duration = .seconds(20),
        until done: ([[String: Any]]) -> Bool
    ) async throws -> (changes: [[String: Any]], cursor: String) {
        var all: [[String: Any]] = []
        var cursor = cursor
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let page = try await syncAll(session, from: cursor, pageSize: pageSize)
            all += page.changes
            cursor = page.cursor
            if done(all) || clock.now > deadline { return (all, cursor) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// Runs `count` async operations with at most `width` in flight.
public func concurrently(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) async throws -> Void) async throws
{
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        while next < min(width, count) {
            let index = next
            group.addTask { try await body(index) }
            next += 1
        }
        while try await group.next() != nil {
            if next < count {
                let index = next
                group.addTask { try await body(index) }
                next += 1
            }
        }
    }
}

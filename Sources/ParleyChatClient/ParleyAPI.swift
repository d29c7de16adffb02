import Glibc
import ParleyHTTPClient
import ParleyJSON

/// The REST half of a Parley client: register or log in, keep the tokens fresh, and the calls a chat needs.
///
/// Every answer is the envelope `{"code": 0, "message": "ok", "data": ...}`; `call` returns `data` or throws the
/// error envelope as `ParleyAPIError.server`. Clients name their app with `X-App-Key` to register and log in;
/// after that the access token (`Authorization: Bearer`, 15 minutes) names app and user. When it expires (code
/// 1031) the refresh token buys a new set once, and the request is repeated.
///
/// An actor because the tokens change (refresh rotates both); one refresh runs at a time, since a refresh token
/// works once and presenting a used one ends the whole session (theft detection).
public actor ParleyAPI {
    public nonisolated let server: ServerAddress
    public nonisolated let appKey: String
    private let http: HTTPClient
    private var session: AuthSession?
    private var refreshing: Task<Void, any Error>?

    /// Platform and device sent at login: the app's session policy (`one_per_platform` by default) lets one session
    /// per user and platform live, so a second `parley chat` of the same user displaces the first.
    public static let platform = "cli"
    private let deviceId = "parley-chat-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)

    public init(server: ServerAddress, appKey: String, http: HTTPClient = HTTPClient()) {
        self.server = server
        self.appKey = appKey
        self.http = http
    }

    /// The session of the last register, login or refresh.
    public var current: AuthSession? { session }

    // MARK: Accounts and tokens

    /// `POST /api/auth/register`: creates a built-in account and opens its first session.
    public func register(username: String, password: String, nickname: String? = nil) async throws(ParleyAPIError)
        -> AuthSession
    {
        var body: JSONObject = [
            "username": .string(username), "password": .string(password),
            "platform": .string(Self.platform), "deviceId": .string(deviceId),
            "deviceModel": "parley chat",
        ]
        if let nickname { body["nickname"] = .string(nickname) }
        let answer = try await call("POST", "/api/auth/register", json: .object(body), authorized: false)
        return try store(AuthSession(json: answer))
    }

    /// `POST /api/auth/login`: opens a session on this device.
    public func login(username: String, password: String) async throws(ParleyAPIError) -> AuthSession {
        let body: JSONValue = [
            "username": .string(username), "password": .string(password),
            "platform": .string(Self.platform), "deviceId": .string(deviceId),
            "deviceModel": "parley chat",
        ]
        let answer = try await call("POST", "/api/auth/login", json: body, authorized: false)
        return try store(AuthSession(json: answer))
    }

    /// `POST /api/im/auth/token`: a fresh IM token for the WebSocket (when the old one expired: code 1031 on
    /// `/ws`, or close 4002).
    public func renewIMToken() async throws(ParleyAPIError) -> String {
        let answer = try await call("POST", "/api/im/auth/token")
        let token = try answer.required("token")
        session?.imToken = token
        return token
    }

    /// `POST /api/auth/logout`: ends this session (its tokens stop working everywhere within a second).
    public func logout() async throws(ParleyAPIError) {
        _ = try await call("POST", "/api/auth/logout", timeout: .seconds(5))
        session = nil
    }

    private func store(_ new: AuthSession) -> AuthSession {
        session = new
        return new
    }

    /// `POST /api/auth/refresh`, one at a time: callers that saw the same expired access token share one refresh.
    private func refreshTokens(replacing expired: String) async throws(ParleyAPIError) {
        guard let session, session.accessToken == expired else { return } // somebody refreshed meanwhile
        if let refreshing {
            do { try await refreshing.value } catch { throw Self.apiError(error) }
            return
        }
        let task = Task { () async throws -> Void in
            let answer = try await self.call(
                "POST", "/api/auth/refresh", json: ["refreshToken": .string(session.refreshToken)],
                authorized: false)
            _ = self.store(try AuthSession(json: answer))
        }
        refreshing = task
        defer { refreshing = nil }
        do { try await task.value } catch { throw Self.apiError(error) }
    }

    private static func apiError(_ error: any Error) -> ParleyAPIError {
        (error as? ParleyAPIError) ?? .transport("\(error)")
    }

    // MARK: Conversations and messages

    /// `GET /api/im/conversations`: pinned first, then by last activity (the first 100).
    public func conversations() async throws(ParleyAPIError) -> [ConversationSummary] {
        let answer = try await call("GET", "/api/im/conversations?limit=100")
        var list: [ConversationSummary] = []
        for item in answer["conversations"]?.arrayValue ?? [] { list.append(try ConversationSummary(json: item)) }
        return list
    }

    /// `GET /api/im/conversations/{id}`: one conversation (1101 before a 1:1 conversation's first message).
    public func conversation(_ conversationId: String) async throws(ParleyAPIError) -> ConversationSummary {
        try ConversationSummary(json: try await call("GET", "/api/im/conversations/\(conversationId)"))
    }

    /// `GET /api/im/conversations/{id}/messages`: the latest `limit` messages, in ascending `seq`.
    public func messages(in conversationId: String, limit: Int) async throws(ParleyAPIError) -> [ChatMessage] {
        let answer = try await call("GET", "/api/im/conversations/\(conversationId)/messages?limit=\(limit)")
        var messages: [ChatMessage] = []
        for item in answer["messages"]?.arrayValue ?? [] { messages.append(try ChatMessage(json: item)) }
        return messages
    }

    /// `POST /api/users/lookup`: nicknames of up to 100 users (unknown ids are left out).
    public func nicknames(of userIds: [String]) async throws(ParleyAPIError) -> [String: String] {
        let answer = try await call("POST", "/api/users/lookup", json: ["ids": .array(userIds.map { .string($0) })])
        var names: [String: String] = [:]
        for user in answer["users"]?.arrayValue ?? [] {
            if let id = user["id"]?.stringValue { names[id] = user["nickname"]?.stringValue ?? id }
        }
        return names
    }

    // MARK: Files

    /// `PUT /api/files`: the file is the raw body, streamed from disk (never held in memory), its name in
    /// `X-File-Name`. The server types it by its bytes and answers the object key and a signed URL.
    /// (`POST /api/files` takes the same as multipart/form-data, with an optional thumbnail.)
    public func upload(path: String) async throws(ParleyAPIError) -> UploadedFile {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw .transport("\(path): not a readable file")
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let answer = try await call(
            "PUT", "/api/files",
            body: .file(path: path, offset: 0, length: Int64(info.st_size)),
            headers: [
                ("X-File-Name", Self.percentEncoded(name)),
                ("Content-Type", "application/octet-stream"),
            ],
            timeout: .seconds(600))
        return try UploadedFile(json: answer)
    }

    /// `POST /api/files/urls`: fresh signed download URLs (objectKey → URL) for the keys the caller may read.
    public func signedURLs(for objectKeys: [String]) async throws(ParleyAPIError) -> [String: String] {
        let answer = try await call(
            "POST", "/api/files/urls", json: ["objectKeys": .array(objectKeys.map { .string($0) })])
        var urls: [String: String] = [:]
        for entry in answer["urls"]?.arrayValue ?? [] {
            if let key = entry["objectKey"]?.stringValue, let url = entry["url"]?.stringValue { urls[key] = url }
        }
        return urls
    }

    // MARK: The envelope

    /// One request; returns the envelope's `data`. `authorized` calls send the access token and, when it expired
    /// (1031), refresh once and repeat.
    func call(
        _ method: String, _ path: String, json: JSONValue? = nil, body: HTTPClientBody = .none,
        headers extra: [(String, String)] = [], authorized: Bool = true,
        timeout: Duration = .seconds(30)
    ) async throws(ParleyAPIError) -> JSONValue {
        var attempt = 0
        while true {
            attempt += 1
            var headers = [("X-App-Key", appKey)] + extra
            var payload = body
            if let json {
                headers.append(("Content-Type", "application/json"))
                payload = .bytes(json.serialized())
            }
            let token = session?.accessToken
            if authorized {
                guard let token else { throw .transport("not logged in") }
                headers.append(("Authorization", "Bearer \(token)"))
            }
            let request = HTTPClientRequest(
                method: method, url: server.baseURL + path, headers: headers, body: payload,
                timeout: timeout)
            let response: HTTPClientResponse
            do {
                response = try await http.execute(request)
            } catch {
                throw .transport("\(method) \(path): \(error)")
            }
            let envelope: JSONValue
            do {
                envelope = try JSONValue.parse(response.body)
            } catch {
                throw .malformedAnswer("\(method) \(path): HTTP \(response.status), not JSON")
            }
            let code = Int(envelope["code"]?.int64Value ?? -1)
            if code == 0 { return envelope["data"] ?? .null }
            let message = envelope["message"]?.stringValue ?? "HTTP \(response.status)"
            if code == 1031, authorized, attempt == 1, let token {
                try await refreshTokens(replacing: token)
                continue
            }
            throw .server(status: response.status, code: code, message: message)
        }
    }

    /// `X-File-Name` may carry percent-encoded UTF-8; everything but unreserved ASCII is encoded.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }
}

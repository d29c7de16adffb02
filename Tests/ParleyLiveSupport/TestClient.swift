import Foundation
import ParleyTestSupport

/// One HTTP exchange's answer, with the Parley envelope decoded.
public struct TestResponse: @unchecked Sendable {
    public let status: Int
    public let headers: [(String, String)]
    public let body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    public var text: String { String(decoding: body, as: UTF8.self) }
    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
    public var code: Int? { json["code"] as? Int }
    public var message: String? { json["message"] as? String }
    public var data: [String: Any] { json["data"] as? [String: Any] ?? [:] }
    public func string(_ key: String) -> String? { data[key] as? String }
}

/// A client for the live server: each request runs the blocking `RawHTTPClient` on its own thread, so that tests
/// never block Swift's cooperative pool (the server's background tasks share it).
public struct TestClient: Sendable {
    /// `timeoutSeconds`: how long a request may wait for its answer.
    public init(port: UInt16, timeoutSeconds: Int = 10) {
        self.port = port
        self.timeoutSeconds = timeoutSeconds
    }

    public let port: UInt16
    public let timeoutSeconds: Int

    public func send(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = [])
        async throws -> TestResponse
    {
        let port = self.port
        let timeoutSeconds = self.timeoutSeconds
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let client = try RawHTTPClient(port: port, timeoutSeconds: timeoutSeconds)
                    var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    for (name, value) in headers { head += "\(name): \(value)\r\n" }
                    if !body.isEmpty || method == "POST" || method == "PATCH" {
                        head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
                    }
                    try client.send(Array((head + "\r\n").utf8) + body)
                    let response = try client.readResponse(headRequest: method == "HEAD")
                    continuation.resume(
                        returning: TestResponse(
                            status: response.status, headers: response.headers,
                            body: response.body))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    public func get(_ target: String, token: String? = nil, headers: [String: String] = [:]) async throws
        -> TestResponse
    {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        return try await send("GET", target, headers: headers)
    }

    public func post(_ target: String, json: [String: Any] = [:], token: String? = nil, headers: [String: String] = [:])
        async throws -> TestResponse
    {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let body = try JSONSerialization.data(withJSONObject: json)
        return try await send("POST", target, headers: headers, body: Array(body))
    }

    public func patch(_ target: String, json: [String: Any], token: String) async throws -> TestResponse {
        let body = try JSONSerialization.data(withJSONObject: json)
        return try await send("PATCH", target, headers: ["Authorization": "Bearer \(token)"], body: Array(body))
    }

    public func delete(_ target: String, token: String) async throws -> TestResponse {
        try await send("DELETE", target, headers: ["Authorization": "Bearer \(token)"])
    }

    // MARK: Flows

    public func register(
        appKey: String, username: String, password: String = "correct horse", platform: String = "ios",
        deviceModel: String = "iPhone 15"
    ) async throws -> TestResponse {
        try await post(
            "/api/auth/register",
            json: [
                "username": username, "password": password, "platform": platform,
                "deviceModel": deviceModel,
            ], headers: ["X-App-Key": appKey])
    }

    public func login(
        appKey: String, username: String, password: String = "correct horse", platform: String = "ios",
        deviceId: String = "", deviceModel: String = "Pixel 8"
    ) async throws -> TestResponse {
        try await post(
            "/api/auth/login",
            json: [
                "username": username, "password": password, "platform": platform,
                "deviceId": deviceId, "deviceModel": deviceModel,
            ],
            headers: ["X-App-Key": appKey])
    }

    public func refresh(_ refreshToken: String, appKey: String? = nil) async throws -> TestResponse {
        try await post(
            "/api/auth/refresh", json: ["refreshToken": refreshToken],
            headers: appKey.map { ["X-App-Key": $0] } ?? [:])
    }
}

/// Tokens out of a register/login/refresh answer.
public struct Session: Sendable {
    public let userId: String
    public let sessionId: String
    public let accessToken: String
    public let refreshToken: String
    public let imToken: String

    public init(_ response: TestResponse) throws {
        let data = response.data
        guard response.status == 200, let access = data["accessToken"] as? String,
            let refresh = data["refreshToken"] as? String, let im = data["imToken"] as? String,
            let sid = data["sessionId"] as? String, let user = data["user"] as? [String: Any],
            let uid = user["id"] as? String
        else {
            throw TestFailure("not a session answer: \(response.status) \(response.text)")
        }
        userId = uid
        sessionId = sid
        accessToken = access
        refreshToken = refresh
        imToken = im
    }
}

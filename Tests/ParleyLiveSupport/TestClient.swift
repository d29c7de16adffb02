import Foundation
import ParleyTestSupport

/// One HTTP exchange's answer, with the Parley envelope decoded.
struct TestResponse: @unchecked Sendable {
    let status: Int
    let headers: [(String, String)]
    let body: [UInt8]

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
    var code: Int? { json["code"] as? Int }
    var message: String? { json["message"] as? String }
    var data: [String: Any] { json["data"] as? [String: Any] ?? [:] }
    func string(_ key: String) -> String? { data[key] as? String }
}

/// A client for the live server: each request runs the blocking `RawHTTPClient` on its own thread, so that tests
/// never block Swift's cooperative pool (the server's background tasks share it).
struct TestClient: Sendable {
    let port: UInt16

    func send(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = [])
        async throws -> TestResponse {
        let port = self.port
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let client = try RawHTTPClient(port: port)
                    var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    for (name, value) in headers { head += "\(name): \(value)\r\n" }
                    if !body.isEmpty || method == "POST" || method == "PATCH" {
                        head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
                    }
                    try client.send(Array((head + "\r\n").utf8) + body)
                    let response = try client.readResponse(headRequest: method == "HEAD")
                    continuation.resume(returning: TestResponse(status: response.status, headers: response.headers,
                                                                body: response.body))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    func get(_ target: String, token: String? = nil, headers: [String: String] = [:]) async throws -> TestResponse {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        return try await send("GET", target, headers: headers)
    }

    func post(_ target: String, json: [String: Any] = [:], token: String? = nil, headers: [String: String] = [:])
        async throws -> TestResponse {
        var headers = headers
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let body = try JSONSerialization.data(withJSONObject: json)
        return try await send("POST", target, headers: headers, body: Array(body))
    }

    func patch(_ target: String, json: [String: Any], token: String) async throws -> TestResponse {
        let body = try JSONSerialization.data(withJSONObject: json)
        return try await send("PATCH", target, headers: ["Authorization": "Bearer \(token)"], body: Array(body))
    }

    func delete(_ target: String, token: String) async throws -> TestResponse {
        try await send("DELETE", target, headers: ["Authorization": "Bearer \(token)"])
    }

    // MARK: Flows

    func register(appKey: String, username: String, password: String = "correct horse", platform: String = "ios",
                  deviceModel: String = "iPhone 15") async throws -> TestResponse {
        try await post("/api/auth/register", json: ["username": username, "password": password, "platform": platform,
                                                    "deviceModel": deviceModel], headers: ["X-App-Key": appKey])
    }

    func login(appKey: String, username: String, password: String = "correct horse", platform: String = "ios",
               deviceId: String = "", deviceModel: String = "Pixel 8") async throws -> TestResponse {
        try await post("/api/auth/login", json: ["username": username, "password": password, "platform": platform,
                                                 "deviceId": deviceId, "deviceModel": deviceModel],
                       headers: ["X-App-Key": appKey])
    }

    func refresh(_ refreshToken: String, appKey: String? = nil) async throws -> TestResponse {
        try await post("/api/auth/refresh", json: ["refreshToken": refreshToken],
                       headers: appKey.map { ["X-App-Key": $0] } ?? [:])
    }
}

/// Tokens out of a register/login/refresh answer.
struct Session {
    let userId: String
    let sessionId: String
    let accessToken: String
    let refreshToken: String
    let imToken: String

    init(_ response: TestResponse) throws {
        let data = response.data
        guard response.status == 200, let access = data["accessToken"] as? String,
              let refresh = data["refreshToken"] as? String, let im = data["imToken"] as? String,
              let sid = data["sessionId"] as? String, let user = data["user"] as? [String: Any],
              let uid = user["id"] as? String else {
            throw TestFailure("not a session answer: \(response.status) \(response.text)")
        }
        userId = uid
        sessionId = sid
        accessToken = access
        refreshToken = refresh
        imToken = im
    }
}

import Foundation
import ParleyFiles
import ParleyLiveSupport
import ParleyTestSupport

/// A live server with one app and users, and helpers that speak the file API.
struct FilesFixture: Sendable {
    let messaging: MessagingFixture
    var live: LiveApp { messaging.live }
    var client: TestClient { messaging.client }
    var files: FilesModule { live.app.files }

    static func run<T>(environment: [String: String] = [:], _ body: (FilesFixture) async throws -> T) async throws -> T
    {
        try await MessagingFixture.run(environment: environment) { try await body(FilesFixture(messaging: $0)) }
    }

    /// Sends exact bytes with exact headers (no defaults added) and reads one answer.
    func raw(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws
        -> TestResponse
    {
        let port = live.port
        return try await onDedicatedThread {
            let client = try RawHTTPClient(port: port, timeoutSeconds: 30)
            var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            if !body.isEmpty || method == "PUT" || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
            try client.send(Array((head + "\r\n").utf8) + body)
            let response = try client.readResponse(headRequest: method == "HEAD")
            return TestResponse(status: response.status, headers: response.headers, body: response.body)
        }
    }

    func put(_ session: Session, _ bytes: [UInt8], name: String? = "photo.bin", type: String? = nil) async throws
        -> TestResponse
    {
        var headers = [("Authorization", "Bearer \(session.accessToken)")]
        if let name {
            headers.append(("X-File-Name", name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name))
        }
        if let type { headers.append(("Content-Type", type)) }
        return try await raw("PUT", "/api/files", headers: headers, body: bytes)
    }

    /// Uploads and requires success; returns the answer's data.
    func upload(_ session: Session, _ bytes: [UInt8], name: String = "photo.bin", type: String? = nil) async throws
        -> [String: Any]
    {
        let response = try await put(session, bytes, name: name, type: type)
        guard response.status == 201 else { throw TestFailure("upload failed: \(response.status) \(response.text)") }
        return response.data
    }

    static let boundary = "----parley-test-boundary-7MA4YWxkTrZu0gW"

    static func multipartBody(_ parts: [(field: String, filename: String?, type: String?, bytes: [UInt8])]) -> [UInt8] {
        var body: [UInt8] = []
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.field)\""
            if let filename = part.filename { head += "; filename=\"\(filename)\"" }
            head += "\r\n"
            if let type = part.type { head += "Content-Type: \(type)\r\n" }
            body += Array((head + "\r\n").utf8) + part.bytes + Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return body
    }

    func postMultipart(_ session: Session, _ body: [UInt8]) async throws -> TestResponse {
        try await raw(
            "POST", "/api/files",
            headers: [
                ("Authorization", "Bearer \(session.accessToken)"),
                ("Content-Type", "multipart/form-data; boundary=\(Self.boundary)"),
            ], body: body)
    }

    /// GET (or HEAD) of a signed URL the server handed out, with extra headers.
    func fetch(_ url: String, method: String = "GET", headers: [(String, String)] = []) async throws -> TestResponse {
        try await raw(method, Self.target(of: url), headers: headers)
    }

    /// `http://host:port/files/...?...` -> `/files/...?...`.
    static func target(of url: String) -> String {
        guard let range = url.range(of: "/files/") else { return url }
        return String(url[range.lowerBound...])
    }

    func urls(_ session: Session, _ keys: [String], ttl: Int? = nil) async throws -> TestResponse {
        var body: [String: Any] = ["objectKeys": keys]
        if let ttl { body["ttl"] = ttl }
        return try await client.post("/api/files/urls", json: body, token: session.accessToken)
    }

    /// Rows of a table for this fixture's app.
    func count(_ sql: String) async throws -> Int {
        let rows = try await messaging.database.query(.init(unsafeSQL: sql))
        return Int(try rows[0].decode(0, as: Int64.self))
    }

    /// Regular files under the storage directory's `sub` folder.
    func storedFiles(_ sub: String) -> [String] {
        let root = live.filesDirectory + "/" + sub
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: [String] = []
        while let item = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + item, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                found.append(item)
            }
        }
        return found
    }
}

/// Deterministic bytes of any size.
func patternBytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
    var state = seed &* 0x9E3779B97F4A7C15
    var out = [UInt8](repeating: 0, count: count)
    for i in 0..<count {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        out[i] = UInt8(truncatingIfNeeded: state)
    }
    return out
}

/// A valid 1x1 PNG.
let tinyPNG: [UInt8] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
]

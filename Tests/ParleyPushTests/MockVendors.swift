import Foundation
import Glibc
import ParleyCrypto
import ParleyLiveSupport
import ParleyPush
import ParleyTestSupport

/// A mock vendor server (scripts/lib/mock_fcm.py or mock_hms.py) as a child process: HTTP/1.1 on 127.0.0.1,
/// recording every request as a JSON line. Needs the Python the mock APNs uses (MockAPNs.python).
final class MockVendorServer: Sendable {
    /// One recorded request.
    struct Request: @unchecked Sendable {
        var kind: String
        var path: String
        var status: Int
        var reply: [String: Any]
        var message: [String: Any]
        var bearer: String?
        var claims: [String: Any]

        var data: [String: Any] { message["data"] as? [String: Any] ?? [:] }
        var android: [String: Any] { message["android"] as? [String: Any] ?? [:] }
        var notification: [String: Any] { message["notification"] as? [String: Any] ?? [:] }
        /// The message's token (FCM: a string; HMS: the first of a list).
        var token: String? { message["token"] as? String ?? (message["token"] as? [String])?.first }
    }

    let process: ChildProcess
    let port: Int
    let directory: String
    var endpoint: String { "http://127.0.0.1:\(port)" }
    /// Creating this file makes the mock revoke every access token it issued so far (at its next request).
    var revokeFile: String { "\(directory)/revoke" }

    init(script: String, arguments: (String) throws -> [String]) async throws {
        guard let python = MockAPNs.python else { throw TestFailure(MockAPNs.unavailable) }
        directory = NSTemporaryDirectory() + "parley-mock-\(script)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let all =
            [
                RepositoryDocuments.root.appendingPathComponent("scripts/lib/\(script).py").path,
                "--port-file", "\(directory)/port", "--record", "\(directory)/requests.jsonl",
                "--revoke-file", "\(directory)/revoke",
            ] + (try arguments(directory))
        process = try ChildProcess(executable: python, arguments: all, outputPath: "\(directory)/output.log")
        let deadline = Date().addingTimeInterval(120) // a hang guard: python may start slowly on a loaded machine
        var port: Int?
        while port == nil {
            if let text = try? String(contentsOfFile: "\(directory)/port", encoding: .utf8) { port = Int(text) }
            guard port == nil else { break }
            guard process.isRunning, Date() < deadline else {
                process.stop()
                throw TestFailure("\(script) did not start: \(process.output())")
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        self.port = port!
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func revokeAccessTokens() throws {
        try "revoke".write(toFile: revokeFile, atomically: true, encoding: .utf8)
    }

    /// Every request so far, in arrival order.
    func requests() -> [Request] {
        guard let text = try? String(contentsOfFile: "\(directory)/requests.jsonl", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                return nil
            }
            return Request(
                kind: object["kind"] as? String ?? "", path: object["path"] as? String ?? "",
                status: object["status"] as? Int ?? 0, reply: object["reply"] as? [String: Any] ?? [:],
                message: object["message"] as? [String: Any] ?? [:], bearer: object["bearer"] as? String,
                claims: object["claims"] as? [String: Any] ?? [:])
        }
    }

    var tokenRequests: [Request] { requests().filter { $0.kind == "token" } }
    func sends(token: String) -> [Request] { requests().filter { $0.kind == "send" && $0.token == token } }
}

/// A Firebase project as the mock FCM knows it: a service account with a fresh RSA key.
struct MockFCMProject: Sendable {
    static let projectId = "parley-test"
    static let clientEmail = "push@parley-test.iam.gserviceaccount.com"
    let key: RSA.SigningKey
    /// The service-account file as Firebase's console downloads it (Google's token_uri: the sender is pointed at
    /// the mock by the override, and the assertion's audience stays Google's).
    let serviceAccountJSON: [UInt8]

    init() throws {
        key = try RSA.SigningKey.generate()
        let object: [String: Any] = [
            "type": "service_account", "project_id": Self.projectId, "private_key_id": "0123456789abcdef",
            "private_key": key.pem, "client_email": Self.clientEmail, "client_id": "1234567890",
            "token_uri": FCMServiceAccount.defaultTokenURI,
        ]
        serviceAccountJSON = Array(try JSONSerialization.data(withJSONObject: object))
    }

    func start() async throws -> MockVendorServer {
        try await MockVendorServer(script: "mock_fcm") { directory in
            let keyFile = "\(directory)/service-account.pub.pem"
            try key.verifyingKey.pem.write(toFile: keyFile, atomically: true, encoding: .utf8)
            return [
                "--public-key", keyFile, "--client-email", Self.clientEmail,
                "--audience", FCMServiceAccount.defaultTokenURI, "--project", Self.projectId,
            ]
        }
    }
}

enum MockHMSApp {
    static let appId = "104567891"
    static let clientSecret = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2"

    static func start() async throws -> MockVendorServer {
        try await MockVendorServer(script: "mock_hms") { _ in
            ["--app-id", appId, "--client-secret", clientSecret]
        }
    }
}

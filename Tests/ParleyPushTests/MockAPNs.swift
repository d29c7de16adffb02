import Foundation
import Glibc
import ParleyCrypto
import ParleyLiveSupport
import ParleyTestSupport

/// scripts/lib/mock_apns.py as a child process: HTTP/2 (h2c) on 127.0.0.1, checking provider tokens against the
/// public keys it is given, recording every request. Token prefixes pick its answer: `badd…` 400 BadDeviceToken,
/// `dead…` 410 Unregistered, `fa11…` 503 on a token's first push.
final class MockAPNs: Sendable {
    struct Provider: Sendable {
        var keyId: String
        var teamId: String
        var key: P256.SigningKey
    }

    /// One recorded request.
    struct Request: @unchecked Sendable {
        var token: String
        var headers: [String: String]
        var payload: [String: Any]
        var status: Int
        var reason: String?
        var keyId: String?
        var teamId: String?
        /// The common name of the client certificate the request came with (TLS mode).
        var certificate: String?

        var pushType: String? { headers["apns-push-type"] }
        var topic: String? { headers["apns-topic"] }
        var aps: [String: Any] { payload["aps"] as? [String: Any] ?? [:] }
        var alert: [String: Any] { aps["alert"] as? [String: Any] ?? [:] }
        var ext: [String: Any] { payload["ext"] as? [String: Any] ?? [:] }
        /// A VoIP push's `ext`, a JSON string (seed 003 reads `payloadDict["ext"] as? String` and parses it).
        var extString: String? { payload["ext"] as? String }
        var voipExt: [String: Any] {
            extString.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? [:]
        }
    }

    static let python: String? = {
        let candidates: [String?] = [
            ProcessInfo.processInfo.environment["PARLEY_TEST_PUSH_PYTHON"],
            RepositoryDocuments.root.appendingPathComponent(".parley/venv/bin/python").path,
        ]
        for case let path? in candidates where FileManager.default.isExecutableFile(atPath: path) {
            let output = NSTemporaryDirectory() + "parley-mock-apns-check-\(UUID().uuidString)"
            defer { unlink(output) }
            guard
                let child = try? ChildProcess(
                    executable: path, arguments: ["-c", "import h2, cryptography"],
                    outputPath: output)
            else { continue }
            if child.waitForExitBlocking() == 0 { return path }
        }
        return nil
    }()

    static let unavailable =
        "the mock APNs needs a Python with h2 and cryptography (.parley/venv or "
        + "PARLEY_TEST_PUSH_PYTHON); scripts/test installs them"

    let process: ChildProcess
    let port: Int
    let directory: String
    let tls: Bool
    var endpoint: String { (tls ? "https" : "http") + "://127.0.0.1:\(port)" }

    /// With `pki`, HTTP/2 over TLS (ALPN h2) with its server certificate, requiring a client certificate its CA
    /// issued: certificate-based authentication as APNs does it.
    init(providers: [Provider], pki: TestPKI? = nil) async throws {
        tls = pki != nil
        guard let python = Self.python else { throw TestFailure(Self.unavailable) }
        directory = NSTemporaryDirectory() + "parley-mock-apns-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var arguments = [
            RepositoryDocuments.root.appendingPathComponent("scripts/lib/mock_apns.py").path,
            "--port-file", "\(directory)/port", "--record", "\(directory)/requests.jsonl",
        ]
        for (index, provider) in providers.enumerated() {
            let path = "\(directory)/key\(index).pem"
            try provider.key.verifyingKey.pem.write(toFile: path, atomically: true, encoding: .utf8)
            arguments += ["--key", "\(provider.keyId):\(provider.teamId):\(path)"]
        }
        if let pki {
            arguments += [
                "--tls-cert", pki.serverCertificate, "--tls-key", pki.serverKey, "--client-ca", pki.caFile,
            ]
        }
        process = try ChildProcess(executable: python, arguments: arguments, outputPath: "\(directory)/output.log")
        let deadline = Date().addingTimeInterval(120) // a hang guard: python may start slowly on a loaded machine
        var port: Int?
        while port == nil {
            if let text = try? String(contentsOfFile: "\(directory)/port", encoding: .utf8) { port = Int(text) }
            guard port == nil else { break }
            guard process.isRunning, Date() < deadline else {
                process.stop()
                throw TestFailure("mock APNs did not start: \(process.output())")
            }
            try? await Task.sleep(for: .milliseconds(20)) // not usleep: it would block a thread of the task pool
        }
        self.port = port!
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Every request so far, in arrival order.
    func requests() -> [Request] {
        guard let text = try? String(contentsOfFile: "\(directory)/requests.jsonl", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                return nil
            }
            return Request(
                token: object["token"] as? String ?? "", headers: object["headers"] as? [String: String] ?? [:],
                payload: object["payload"] as? [String: Any] ?? [:], status: object["status"] as? Int ?? 0,
                reason: object["reason"] as? String, keyId: object["kid"] as? String,
                teamId: object["iss"] as? String, certificate: object["certificate"] as? String)
        }
    }

    func requests(token: String) -> [Request] { requests().filter { $0.token == token } }
}

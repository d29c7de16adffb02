import Foundation
import ParleyTestSupport
import Testing

/// moto's S3 (and IAM) emulation, `moto_server`, on a free port for one test. Found through
/// `PARLEY_TEST_MOTO_SERVER` or `<repo>/.parley/venv/bin/moto_server` (scripts/test installs it there).
final class MotoServer: Sendable {
    static let executable: String? = {
        if let path = ProcessInfo.processInfo.environment["PARLEY_TEST_MOTO_SERVER"], !path.isEmpty {
            return FileManager.default.isExecutableFile(atPath: path) ? path : nil
        }
        // #filePath is <repo>/Tests/ParleyFilesTests/S3/MotoServer.swift.
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let path = repository.appendingPathComponent(".parley/venv/bin/moto_server").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    /// The virtualenv's Python beside moto_server (it has botocore).
    static let python: String? = executable.flatMap { executable in
        let path = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("python").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    static let skipReason: Comment =
        "moto_server not found: set PARLEY_TEST_MOTO_SERVER or run scripts/test, which installs moto[server] into .parley/venv"

    let port: Int
    var endpoint: String { "http://127.0.0.1:\(port)" }
    private let process: ChildProcess
    private let logPath: String

    /// - Parameter authenticatedAfter: moto's INITIAL_NO_AUTH_ACTION_COUNT: after this many requests moto checks
    ///   every request's signature against its IAM users' keys (nil: never, its default).
    init(authenticatedAfter: Int? = nil) async throws {
        let executable = try #require(Self.executable)
        port = ChildProcess.unusedPort()
        logPath = NSTemporaryDirectory() + "parley-moto-\(port)-\(UUID().uuidString).log"
        var environment: [String: String] = [:]
        if let authenticatedAfter { environment["INITIAL_NO_AUTH_ACTION_COUNT"] = String(authenticatedAfter) }
        process = try ChildProcess(
            executable: executable, arguments: ["-H", "127.0.0.1", "-p", "\(port)"],
            environment: environment, outputPath: logPath)
        // A TCP probe, not an HTTP request, so it does not count as one of moto's unauthenticated actions.
        try await process.waitUntilListeningOrStop(port: port, timeout: .seconds(180))
    }

    var log: String { process.output() }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: logPath)
    }
}

import Foundation
import Glibc
import ParleyHTTPClient
import ParleyTestSupport
import Testing

/// HTTP/2 against Debian's `nghttpd` (package nghttp2-server), over TLS with a certificate made by the `openssl`
/// command and in cleartext with prior knowledge. Skipped when either program is missing.
@Suite(
    .enabled(
        if: NGHTTPD.executable != nil && NGHTTPD.openssl != nil,
        "nghttpd or openssl not found (apt-get install nghttp2-server openssl)"))
struct HTTP2Tests {
    /// Small enough for one DATA frame, like APNs answers: libcurl 7.88 sometimes stalls multiplexed bodies that
    /// span several frames (see `HTTPClientRequest.HTTPVersion.http2TLS`).
    static let content = TestHTTPServer.pattern(count: 4_000)

    @Test func tlsRequestsMultiplexOverOneConnection() async throws {
        let server = try await NGHTTPD(files: ["data.bin": Self.content], tls: true)
        defer { server.stop() }
        let client = HTTPClient(tls: HTTPClientTLS(caFile: server.certificatePath))
        defer { client.shutdown() }

        let responses = try await Self.fetchConcurrently(50, from: server, with: client, version: .http2TLS)
        #expect(responses.allSatisfy { $0.httpVersion == .http2 })
        #expect(responses.filter { $0.status == 404 }.count == 1)
        let found = responses.filter { $0.status == 200 }
        #expect(found.count == 49)
        #expect(found.allSatisfy { $0.body == Self.content })
        // Every stream went over one connection (nghttpd -v numbers its sessions "[id=N]").
        #expect(server.sessionsWithRequests() == 1)
    }

    @Test func untrustedCertificateIsATLSError() async throws {
        let server = try await NGHTTPD(files: ["data.bin": Self.content], tls: true)
        defer { server.stop() }
        let client = HTTPClient() // the system's authorities do not know the test certificate
        defer { client.shutdown() }

        await #expect {
            _ = try await client.execute(HTTPClientRequest(url: server.baseURL + "/data.bin", httpVersion: .http2TLS))
        } throws: { error in
            guard case .tls(let message) = error as? HTTPClientError else { return false }
            return !message.isEmpty
        }
    }

    @Test func priorKnowledgeRequestsAllSucceed() async throws {
        let server = try await NGHTTPD(files: ["data.bin": Self.content], tls: false)
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }

        let responses = try await Self.fetchConcurrently(10, from: server, with: client, version: .http2PriorKnowledge)
        #expect(responses.allSatisfy { $0.httpVersion == .http2 })
        #expect(responses.filter { $0.status == 200 }.allSatisfy { $0.body == Self.content })
        #expect(responses.filter { $0.status == 404 }.count == 1)
        // libcurl before 8.0 cannot reuse prior-knowledge connections, so the client opens one per request.
        #expect(server.sessionsWithRequests() == (HTTPClient.multiplexesPriorKnowledge ? 1 : 10))
    }

    /// `count` requests at once: the first for a missing file, the others for data.bin.
    static func fetchConcurrently(
        _ count: Int, from server: NGHTTPD, with client: HTTPClient,
        version: HTTPClientRequest.HTTPVersion
    ) async throws -> [HTTPClientResponse] {
        try await withThrowingTaskGroup(of: HTTPClientResponse.self) { group in
            for index in 0..<count {
                group.addTask {
                    let path = index == 0 ? "/missing" : "/data.bin"
                    return try await client.execute(HTTPClientRequest(url: server.baseURL + path, httpVersion: version))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }
}

/// `nghttpd -v` on a free port, serving files from a temporary directory; with `tls`, a fresh self-signed
/// certificate for 127.0.0.1 (`certificatePath`, to trust in the client).
final class NGHTTPD: Sendable {
    static let executable = ChildProcess.find("nghttpd")
    static let openssl = ChildProcess.find("openssl")

    let port: Int
    let baseURL: String
    let certificatePath: String
    private let directory: String
    private let process: ChildProcess

    init(files: [String: [UInt8]], tls: Bool) async throws {
        let executable = try #require(Self.executable)
        directory = NSTemporaryDirectory() + "parley-nghttpd-" + UUID().uuidString
        let root = directory + "/root"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for (name, bytes) in files {
            try Data(bytes).write(to: URL(fileURLWithPath: root + "/" + name))
        }
        port = ChildProcess.unusedPort()
        certificatePath = directory + "/cert.pem"
        var arguments = ["-v", "-d", root, "\(port)"]
        if tls {
            let keyPath = directory + "/key.pem"
            let openssl = try ChildProcess(
                executable: try #require(Self.openssl),
                arguments: [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", keyPath, "-out", certificatePath, "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1",
                ],
                outputPath: directory + "/openssl.log")
            let status = await openssl.waitForExit()
            try #require(status == 0, "openssl failed: \(openssl.output())")
            arguments += [keyPath, certificatePath]
        } else {
            arguments.insert("--no-tls", at: 0)
        }
        baseURL = (tls ? "https" : "http") + "://127.0.0.1:\(port)"
        process = try ChildProcess(executable: executable, arguments: arguments, outputPath: directory + "/nghttpd.log")
        try await process.waitUntilListeningOrStop(port: port, timeout: .seconds(30))
    }

    /// How many connections carried at least one request (nghttpd -v logs "[id=N] [time] recv HEADERS frame").
    func sessionsWithRequests() -> Int {
        Set(process.output().matches(of: /\[id=(\d+)\] \[[^\]]*\] recv HEADERS frame/).map { String($0.output.1) })
            .count
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

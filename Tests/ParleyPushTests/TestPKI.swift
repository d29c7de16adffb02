import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// A throwaway PKI made by the `openssl` command for each test: a CA, a server certificate for 127.0.0.1 (the TLS
/// mock APNs) and an APNs-style client certificate whose common name is the bundle id, exported as .p12 files.
/// Nothing here is ever committed: every key is generated in a temporary directory and deleted with it.
struct TestPKI {
    static let openssl = ChildProcess.find("openssl")
    static let unavailable = "the openssl command is needed to make test certificates (apt-get install openssl)"

    let directory: String
    var caFile: String { directory + "/ca.pem" }
    var serverCertificate: String { directory + "/server.pem" }
    var serverKey: String { directory + "/server.key" }
    var clientCertificate: String { directory + "/client.pem" }

    /// Makes the CA, the server certificate and a client certificate for `clientName`.
    init(clientName: String) async throws {
        directory = NSTemporaryDirectory() + "parley-pki-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: directory + "/server.ext", atomically: true, encoding: .utf8)
        try "extendedKeyUsage=clientAuth\n".write(toFile: directory + "/client.ext", atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await run(
            ["req", "-x509"] + ec + [
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Parley Test CA",
            ])
        for (name, subject) in [("server", "/CN=127.0.0.1"), ("client", "/CN=\(clientName)")] {
            try await run(["req"] + ec + ["-keyout", "\(name).key", "-out", "\(name).csr", "-subj", subject])
            try await run([
                "x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", "\(name).ext", "-out", "\(name).pem",
            ])
        }
    }

    /// The client certificate, its key and the CA as a .p12 under `password` ("" for none); `legacy` encrypts it
    /// with RC2 and 3DES as Keychain Access and older exporters do.
    func clientP12(password: String, legacy: Bool = false) async throws -> String {
        let path = directory + "/client-\(UUID().uuidString).p12"
        try await run(
            [
                "pkcs12", "-export", "-inkey", "client.key", "-in", "client.pem", "-certfile", "ca.pem", "-out", path,
                "-passout", "pass:\(password)",
            ] + (legacy ? ["-legacy"] : []))
        return path
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    private func run(_ arguments: [String]) async throws {
        let openssl = try #require(Self.openssl)
        let child = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "cd \"$0\" && exec \"$@\"", directory, openssl] + arguments,
            outputPath: directory + "/openssl.log")
        let status = await child.waitForExit()
        guard status == 0 else { throw TestFailure("openssl \(arguments.first ?? "") failed: \(child.output())") }
    }
}

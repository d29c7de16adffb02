import Foundation
import Glibc
import ParleyApp
import ParleyHTTP
import ParleyNet
import ParleyObservability
import Testing

/// `parley healthcheck` (the container HEALTHCHECK) reads status lines strictly and fails closed.
@Suite struct HealthProbeTests {
    @Test func readsTheStatusCodeOfAStatusLine() {
        #expect(HealthProbe.statusCode(Array("HTTP/1.1 200 OK\r\n".utf8)) == 200)
        #expect(HealthProbe.statusCode(Array("HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\n".utf8)) == 503)
        #expect(HealthProbe.statusCode(Array("HTTP/1.1 204\r\n".utf8)) == 204)
    }

    @Test func refusesIncompleteOrForeignStatusLines() {
        #expect(HealthProbe.statusCode(Array("HTTP/1.1 200 OK".utf8)) == nil) // no CRLF yet
        #expect(HealthProbe.statusCode(Array("HTTP/1.1 20\r\n".utf8)) == nil)
        #expect(HealthProbe.statusCode(Array("HTTP/1.1 2x0 OK\r\n".utf8)) == nil)
        #expect(HealthProbe.statusCode(Array("HTTP/1.1 2000 OK\r\n".utf8)) == nil)
        #expect(HealthProbe.statusCode(Array("HTTP/2 200\r\n".utf8)) == nil)
        #expect(HealthProbe.statusCode(Array("SSH-2.0-OpenSSH_9.2\r\n".utf8)) == nil)
        #expect(HealthProbe.statusCode([]) == nil)
    }

    @Test func probesWildcardListenAddressesOverLoopback() {
        #expect(HealthProbe.probeHost(forListenHost: "0.0.0.0") == "127.0.0.1")
        #expect(HealthProbe.probeHost(forListenHost: "::") == "::1")
        #expect(HealthProbe.probeHost(forListenHost: "localhost") == "127.0.0.1")
        #expect(HealthProbe.probeHost(forListenHost: "10.1.2.3") == "10.1.2.3")
    }

    @Test func requestIsAValidHTTP11RequestThatClosesTheConnection() {
        let text = String(decoding: HealthProbe.request(path: "/healthz"), as: UTF8.self)
        #expect(text.hasPrefix("GET /healthz HTTP/1.1\r\n"))
        #expect(text.contains("\r\nHost: localhost\r\n"))
        #expect(text.contains("\r\nConnection: close\r\n"))
        #expect(text.hasSuffix("\r\n\r\n"))
    }

    @Test func reportsTheStatusOfALiveServer() async throws {
        let group = try EventLoopGroup(threads: 1)
        var router = Router()
        router.get("/healthz") { _, _ in .ok(["status": "ok"]) }
        router.get("/sick") { _, _ in HTTPResponse(status: 503, body: []) }
        var config = HTTPServerConfiguration()
        config.host = "127.0.0.1"
        config.port = 0
        let server = HTTPServer(
            configuration: config, group: group,
            responder: HTTPResponder(router: router, middleware: []),
            logger: Logger(sink: LogSink(capturingAt: .error)), metrics: MetricsRegistry())
        let port = try await server.start()
        // The probe blocks; keep it off the cooperative pool's few threads.
        let healthy = try await Self.detached { try HealthProbe.check(host: "0.0.0.0", port: port) }
        let sick = try await Self.detached { try HealthProbe.check(host: "127.0.0.1", port: port, path: "/sick") }
        await server.shutdown(grace: .seconds(2))
        group.shutdown()
        #expect(healthy == 200)
        #expect(sick == 503)
    }

    @Test func failsWhenNothingListens() throws {
        let (fd, port) = try Socket.listen(host: "127.0.0.1", port: 0, reusePort: false)
        close(fd) // the port is now free: connect is refused
        #expect(throws: HealthProbe.Failure.self) { try HealthProbe.check(host: "127.0.0.1", port: port) }
    }

    @Test func refusesAHostThatIsNotAnAddress() {
        #expect(throws: HealthProbe.Failure(description: "not an IP address: example.invalid")) {
            try HealthProbe.check(host: "example.invalid", port: 8080)
        }
    }

    static func detached(_ body: @escaping @Sendable () throws -> Int) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }
}

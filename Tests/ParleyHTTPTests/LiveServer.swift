import ParleyHTTP
import ParleyNet
import ParleyObservability

/// Starts a real server on 127.0.0.1:0 with the given routes, for tests that talk over sockets.
final class LiveServer: Sendable {
    let group: EventLoopGroup
    let server: HTTPServer
    let port: UInt16
    let sink: LogSink

    init(
        configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        routes: (inout Router) -> Void
    ) async throws {
        group = try EventLoopGroup(threads: 2)
        sink = LogSink(capturingAt: .info)
        let logger = Logger(sink: sink)
        let metrics = MetricsRegistry()
        var router = Router()
        routes(&router)
        let responder = HTTPResponder(
            router: router,
            middleware: [
                RequestIDMiddleware(), AccessLogMiddleware(metrics: metrics, logAccess: true),
            ])
        var config = HTTPServerConfiguration()
        config.host = "127.0.0.1"
        config.port = 0
        configure(&config)
        server = HTTPServer(configuration: config, group: group, responder: responder, logger: logger, metrics: metrics)
        port = try await server.start()
    }

    func stop() async {
        await server.shutdown(grace: .seconds(2))
        group.shutdown()
    }
}

/// A small fixed set of routes most tests use.
func standardRoutes(_ router: inout Router) {
    router.get("/hello") { _, _ in .ok(["greeting": "hello"]) }
    router.get("/users/{id}") { _, context in .ok(["id": try context.parameter("id")]) }
    router.post("/echo") { request, _ in HTTPResponse(status: 200, body: request.bodyBytes) }
    router.delete("/users/{id}") { _, _ in .ok() }
    router.get("/files/{key...}") { _, context in .ok(["key": try context.parameter("key")]) }
    router.get("/slow") { _, _ in
        try await Task.sleep(for: .milliseconds(300))
        return .ok(["slow": true])
    }
    router.get("/fail") { _, _ in throw APIError.validationFailed.with(message: "nope") }
    router.get("/crash") { _, _ in
        struct Secret: Error {}
        throw Secret()
    }
}

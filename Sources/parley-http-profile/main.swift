// A minimal server on Parley's HTTP stack for profiling the request path: one `/healthz` route and a
// chosen set of the built-in middleware (MW=none | rid,log | any subset), on PORT (default 18080),
// access log to LOG_FILE (default /dev/null). Used by scripts/profile-http under callgrind.
import Glibc
import ParleyHTTP
import ParleyNet
import ParleyObservability

Socket.ignoreSIGPIPE()
func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

let group = try EventLoopGroup(threads: Int(env("LOOPS") ?? "") ?? 2)
let sink = LogSink.file(path: env("LOG_FILE") ?? "/dev/null", level: .info)
let metrics = MetricsRegistry()
var router = Router()
let body = Envelope.success(["status": "ok"])
// IMMEDIATE=0 profiles the task path (every request in a task), the default the synchronous first try.
if env("IMMEDIATE") == "0" {
    router.get("/healthz") { _, _ in HTTPResponse.json(status: 200, body: body) }
} else {
    router.get("/healthz", immediate: { _, _ in HTTPResponse.json(status: 200, body: body) }) { _, _ in
        HTTPResponse.json(status: 200, body: body)
    }
}
var chain: [any HTTPMiddleware] = []
for name in (env("MW") ?? "rid,log").split(separator: ",") {
    switch name {
    case "rid": chain.append(RequestIDMiddleware())
    case "log": chain.append(AccessLogMiddleware(metrics: metrics, logAccess: true))
    default: break
    }
}
var config = HTTPServerConfiguration()
config.port = UInt16(env("PORT") ?? "") ?? 18080
let server = HTTPServer(
    configuration: config, group: group, responder: HTTPResponder(router: router, middleware: chain),
    logger: Logger(sink: sink), metrics: metrics)
Task.detached {
    try await server.start()
    while true {
        try await Task.sleep(for: .milliseconds(200))
        sink.flush()
    }
}
// SIGTERM ends the process (callgrind still writes its profile); nothing here needs a graceful stop.
while true { sleep(60) }

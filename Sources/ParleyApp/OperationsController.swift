import Foundation
import Glibc
import ParleyAuth
import ParleyCrypto
import ParleyHTTP
import ParleyObservability
import ParleyPostgres
import ParleyWebSocket

/// Health, readiness and metrics: the routes orchestrators and Prometheus call.
struct OperationsController {
    let database: PostgresClient
    let metrics: MetricsRegistry
    /// `PARLEY_METRICS_TOKEN`: the scrape is refused without it (request rates and internals are not public).
    let metricsToken: String?

    /// Prebuilt: `/healthz` is the hottest cheap route (load balancers poll it), so it allocates nothing to answer.
    private static let healthBody: [UInt8] = Envelope.success(["status": "ok"])

    func register(on router: inout Router) {
        let health: HTTPImmediateHandler = { _, _ in
            HTTPResponse.json(status: 200, body: OperationsController.healthBody)
        }
        router.get("/healthz", immediate: health) { _, _ in
            HTTPResponse.json(status: 200, body: OperationsController.healthBody)
        }
        let database = self.database
        router.get("/readyz") { _, context in
            do {
                try await database.ping()
            } catch {
                context.logger.warning("readiness check failed", ["error": .string(String(describing: error))])
                throw APIError.databaseUnavailable
            }
            return .ok(["status": "ready", "database": "ok"])
        }
        let metrics = self.metrics
        let required = metricsToken.map { Array($0.utf8) }
        router.get("/metrics") { request, _ in
            if let required {
                guard let presented = Authenticator.bearerToken(of: request) else { throw APIError.tokenMissing }
                guard ConstantTime.equals(Array(presented.utf8), required) else { throw APIError.tokenInvalid }
            }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
            return HTTPResponse(status: 200, headers: headers, body: Array(metrics.render().utf8))
        }
    }

    /// Process figures read at scrape time.
    static func registerProcessMetrics(_ metrics: MetricsRegistry) {
        metrics.gaugeFunction("parley_process_resident_memory_bytes", help: "Resident set size of the process.") {
            [([:], Double(residentMemoryBytes()))]
        }
    }

    static func residentMemoryBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// Routes for benchmarks and tests only, enabled by PARLEY_DEV_ROUTES=1.
struct DevelopmentController {
    let database: PostgresClient

    func register(on router: inout Router) {
        let database = self.database
        // The exact read of `pgbench -S`, so the benchmark compares like with like.
        router.get("/bench/accounts/{aid}") { _, context in
            guard let aid = Int(try context.parameter("aid")), aid > 0 else {
                throw APIError.validationFailed.with(message: "aid must be a positive integer")
            }
            let rows = try await database.query("SELECT abalance FROM pgbench_accounts WHERE aid = \(aid)")
            guard let row = rows.first else { throw APIError.notFound.with(message: "no account \(aid)") }
            let balance = try row.decode(0, as: Int.self)
            return .ok(BenchAccount(aid: aid, abalance: balance))
        }
        // RFC 6455 echo for the Autobahn suite (scripts/e2e/40-autobahn.sh) and WebSocket benchmarks.
        router.get("/ws/echo") { request, context in
            try WebSocketServer.upgrade(
                request, configuration: WebSocketEchoHandler.configuration,
                logger: context.logger
            ) { _ in WebSocketEchoHandler() }
        }
    }

    struct BenchAccount: Encodable {
        let aid: Int
        let abalance: Int
    }
}

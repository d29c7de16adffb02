import Glibc
import ParleyNet
import ParleyObservability
import Synchronization

/// One JSON access-log line per request and the request metrics (count by route, method and status;
/// latency histogram by route). Sees final statuses: errors are mapped before any after-step runs.
public struct AccessLogMiddleware: HTTPInlineMiddleware {
    let logAccess: Bool
    let requests: CounterFamily
    let latency: HistogramFamily
    private let series = SeriesCache()

    /// The metric series of each route, found by the route's id (an array index) rather than by hashing its
    /// name on every request, in a cache per thread (the event loops never wait for each other's lock); unmatched
    /// requests (404, 405) use a shared dictionary by name.
    final class SeriesCache: Sendable {
        struct Key: Hashable { let route: String; let method: HTTPMethod; let status: Int }
        final class RouteSeries {
            var histograms: [Histogram?] = []
            /// Per route id: the counter of each method and status seen, and the access log's
            /// `"method":...,"route":...` for it, escaped once.
            var counters: [[(method: HTTPMethod, status: Int, counter: Counter, logFields: [UInt8])]] = []
        }
        let routes = LoopLocal { RouteSeries() }
        let counters = Mutex<[Key: Counter]>([:])
        let histograms = Mutex<[String: Histogram]>([:])
    }

    public init(metrics: MetricsRegistry, logAccess: Bool) {
        self.logAccess = logAccess
        requests = metrics.counter(
            "parley_http_requests_total", help: "HTTP requests by route, method and status.",
            labels: ["route", "method", "status"])
        latency = metrics.histogram(
            "parley_http_request_duration_seconds", help: "HTTP request latency by route.",
            labels: ["route"])
    }

    /// The clock started when the connection read the request (`RequestContext.startedAt`).
    public func willHandle(_ request: HTTPRequest, _ context: inout RequestContext) {}

    private func seriesOfRoute(
        _ id: Int, name: String, method: HTTPMethod,
        status: Int
    ) -> (Counter, Histogram, logFields: [UInt8]) {
        let local = series.routes.value
        if id < local.histograms.count, let histogram = local.histograms[id],
            let entry = local.counters[id].first(where: { $0.method == method && $0.status == status })
        {
            return (entry.counter, histogram, entry.logFields)
        }
        // First time on this thread: the registry hands out the same series to every thread.
        let counter = requests.labels(name, method.rawValue, String(status))
        let histogram = latency.labels(name)
        while local.histograms.count <= id {
            local.histograms.append(nil)
            local.counters.append([])
        }
        local.histograms[id] = histogram
        let logFields = Self.methodAndRoute(method: method, route: name)
        local.counters[id].append((method, status, counter, logFields))
        return (counter, histogram, logFields)
    }

    /// `"method":"GET","route":"/x/{id}"` as the access log writes it.
    static func methodAndRoute(method: HTTPMethod, route: String) -> [UInt8] {
        var line = JSONLine()
        line.field("method", string: method.rawValue)
        line.field("route", string: route)
        var bytes = line.finish()
        // Only the fields: without the object's braces and the line's end.
        bytes.removeFirst()
        bytes.removeLast(2)
        return bytes
    }

    private func seriesByName(_ route: String, method: HTTPMethod, status: Int) -> (
        Counter, Histogram, logFields: [UInt8]?
    ) {
        let key = SeriesCache.Key(route: route, method: method, status: status)
        let counter =
            series.counters.withLock { $0[key] }
            ?? {
                let created = requests.labels(route, method.rawValue, String(status))
                series.counters.withLock { $0[key] = created }
                return created
            }()
        let histogram =
            series.histograms.withLock { $0[route] }
            ?? {
                let created = latency.labels(route)
                series.histograms.withLock { $0[route] = created }
                return created
            }()
        return (counter, histogram, nil)
    }

    public func didHandle(_ request: HTTPRequest, _ context: RequestContext, _ response: inout HTTPResponse) {
        let elapsed = Instant.now().nanoseconds(since: context.startedAt)
        let route = context.routePattern.isEmpty ? "unmatched" : context.routePattern
        let (counter, histogram, logFields) =
            context.routeID >= 0
            ? seriesOfRoute(context.routeID, name: route, method: request.method, status: response.status)
            : seriesByName(route, method: request.method, status: response.status)
        counter.increment()
        histogram.observe(Double(elapsed) / 1e9)
        if logAccess {
            let requestID = context.requestID
            let remote = request.remoteAddress
            context.baseLogger.log(.info, "request") { line in
                // Ids are generated or checked to [A-Za-z0-9._-] (RequestIDMiddleware), addresses are numeric:
                // neither needs escaping.
                if !requestID.isEmpty { line.field("request_id", plain: requestID) }
                if let logFields {
                    line.fields(preformatted: logFields)
                } else {
                    line.field("method", string: request.method.rawValue)
                    line.field("route", string: route)
                }
                line.field("path", string: request.path)
                line.field("status", int: response.status)
                line.field("duration_us", int: Int(elapsed / 1000))
                line.field("remote", plain: remote)
                line.field("bytes", int: response.file.map { Int($0.length) } ?? response.body.count)
            }
        }
    }
}

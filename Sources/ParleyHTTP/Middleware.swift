import Glibc
import ParleyNet
import ParleyObservability
import Synchronization

/// Wraps request handling: do something before, call `next`, do something after.
public protocol HTTPMiddleware: Sendable {
    func handle(_ request: HTTPRequest, _ context: RequestContext, next: HTTPHandler) async throws -> HTTPResponse
}

/// Middleware that needs no `await`: work before the rest of the chain and after it. A leading run of
/// these in a responder's list runs inline in one wrapper instead of one async layer each (an async
/// layer costs a measurable share of a cheap request: scripts/profile-http). Used alone, it still works
/// as an ordinary `HTTPMiddleware`.
public protocol HTTPInlineMiddleware: HTTPMiddleware {
    func willHandle(_ request: HTTPRequest, _ context: inout RequestContext)
    func didHandle(_ request: HTTPRequest, _ context: RequestContext, _ response: inout HTTPResponse)
}

extension HTTPInlineMiddleware {
    public func handle(_ request: HTTPRequest, _ context: RequestContext, next: HTTPHandler) async throws -> HTTPResponse {
        var context = context
        willHandle(request, &context)
        var response: HTTPResponse
        do {
            response = try await next(request, context)
        } catch {
            response = .error(mapping: error, logger: context.logger)
        }
        didHandle(request, context, &response)
        return response
    }
}

/// Composes the middleware chain around each route once, at start-up, so a request pays no
/// composition cost. Unknown paths and wrong methods run through the same chain (and so are logged
/// and counted) with an endpoint that throws 404 or 405.
public struct HTTPResponder: Sendable {
    /// The routes with the middleware already wrapped around each handler.
    public let router: Router
    /// The routes as registered, without middleware.
    public let bareRouter: Router
    private let middleware: [any HTTPMiddleware]
    private let notFound: HTTPHandler

    public init(router: Router, middleware: [any HTTPMiddleware]) {
        bareRouter = router
        self.middleware = middleware
        var wrapped = Router()
        for route in router.routes {
            wrapped.add(route.method, route.pattern, options: route.options,
                        immediate: route.immediate.flatMap { HTTPResponder.composeImmediate(middleware, endpoint: $0) },
                        HTTPResponder.compose(middleware, endpoint: route.handler))
        }
        self.router = wrapped
        self.notFound = HTTPResponder.compose(middleware) { _, _ in throw APIError.notFound }
    }

    static func compose(_ middleware: [any HTTPMiddleware], endpoint: @escaping HTTPHandler) -> HTTPHandler {
        let inline = middleware.prefix { $0 is any HTTPInlineMiddleware }.compactMap { $0 as? any HTTPInlineMiddleware }
        let layered = middleware.dropFirst(inline.count)
        let chain = layered.reversed().reduce(endpoint) { next, layer in
            { request, context in try await layer.handle(request, context, next: next) }
        }
        guard !inline.isEmpty else { return chain }
        // The same order as nested layers: befores first to last, afters last to first, errors mapped
        // before any after-step sees the response.
        return { request, context in
            var context = context
            inline.withUnsafeBufferPointer { layers in
                for index in layers.indices { layers[index].willHandle(request, &context) }
            }
            var response: HTTPResponse
            do {
                response = try await chain(request, context)
            } catch {
                response = .error(mapping: error, logger: context.logger)
            }
            inline.withUnsafeBufferPointer { layers in
                for index in layers.indices.reversed() { layers[index].didHandle(request, context, &response) }
            }
            return response
        }
    }

    /// The synchronous first try wrapped in the middleware, when every middleware is inline (no await); nil
    /// otherwise, and the route then always runs its async handler. The context is the connection's own, stamped
    /// in place (no copy per request). A nil answer from the endpoint means "not now": the before-steps ran for
    /// nothing (they only stamp the context, and the async chain stamps it again).
    static func composeImmediate(_ middleware: [any HTTPMiddleware],
                                 endpoint: @escaping HTTPImmediateHandler) -> HTTPImmediateHandler? {
        let inline = middleware.compactMap { $0 as? any HTTPInlineMiddleware }
        guard inline.count == middleware.count else { return nil }
        // Walked through a buffer pointer: its elements are called in place, where `for layer in inline` copies
        // each existential (and retains what it holds) twice per request.
        return { request, context in
            inline.withUnsafeBufferPointer { layers in
                for index in layers.indices { layers[index].willHandle(request, &context) }
            }
            var response: HTTPResponse
            do {
                guard let answered = try endpoint(request, &context) else { return nil }
                response = answered
            } catch {
                response = .error(mapping: error, logger: context.logger)
            }
            inline.withUnsafeBufferPointer { layers in
                for index in layers.indices.reversed() { layers[index].didHandle(request, context, &response) }
            }
            return response
        }
    }

    /// The handler (middleware included) for a match.
    public func handler(for match: RouteMatch) -> HTTPHandler {
        switch match {
        case .found(let route, _):
            return route.handler
        case .methodNotAllowed(let allowed, _):
            let error = APIError.methodNotAllowed(allowed: allowed.map(\.rawValue))
            return HTTPResponder.compose(middleware) { _, _ in throw error }
        case .notFound:
            return notFound
        }
    }

    /// Runs a request through the chain; never throws (the error middleware answers).
    public func respond(to request: HTTPRequest, match: RouteMatch, context: RequestContext) async -> HTTPResponse {
        do {
            return try await handler(for: match)(request, context)
        } catch {
            return .error(mapping: error, logger: context.logger)
        }
    }
}

/// Gives every request an id: the client's `X-Request-Id` when it is short and plain, else a new one.
/// The id is echoed in the response and carried by the request's logger.
public struct RequestIDMiddleware: HTTPInlineMiddleware {
    /// 6 random hex digits per process run: with `-` and a counter of up to 8 hex digits an id stays within 15
    /// bytes, which Swift keeps inline in the `String` (no allocation per request) for the first 4 billion ids.
    private static let prefix: (UInt64, UInt64) = {
        var rng = SystemRandomNumberGenerator()
        var random = rng.next() as UInt64
        var bytes: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            let hex: StaticString = "0123456789abcdef"
            for index in 0..<6 {
                raw[index] = hex.utf8Start[Int(random & 0xF)]
                random >>= 4
            }
            raw[6] = UInt8(ascii: "-")
        }
        return bytes
    }()
    private static let counter = Atomic<UInt64>(0)

    public init() {}

    /// `<process prefix>-<counter in hex>`: unique per process run, cheap (one small string, no formatting).
    public static func generate() -> String {
        var n = counter.add(1, ordering: .relaxed).newValue
        var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
        return withUnsafeMutableBytes(of: &buffer) { raw -> String in
            withUnsafeBytes(of: prefix) { prefix in
                for index in 0..<7 { raw[index] = prefix[index] }
            }
            let hex: StaticString = "0123456789abcdef"
            var digits = 0
            var probe = n
            repeat { digits += 1; probe >>= 4 } while probe != 0
            var index = 7 + digits
            let end = index
            repeat {
                index -= 1
                raw[index] = hex.utf8Start[Int(n & 0xF)]
                n >>= 4
            } while n != 0
            return String(decoding: UnsafeRawBufferPointer(rebasing: raw[0..<end]), as: UTF8.self)
        }
    }

    static func isAcceptable(_ id: String) -> Bool {
        id.utf8.count <= 64 && !id.isEmpty && id.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
        }
    }

    public func willHandle(_ request: HTTPRequest, _ context: inout RequestContext) {
        if let incoming = request.headers["x-request-id"], RequestIDMiddleware.isAcceptable(incoming) {
            context.requestID = incoming
        } else {
            context.requestID = RequestIDMiddleware.generate()
        }
    }

    public func didHandle(_ request: HTTPRequest, _ context: RequestContext, _ response: inout HTTPResponse) {
        response.headers.appendLowercased(name: "x-request-id", value: context.requestID)
    }
}

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
        requests = metrics.counter("parley_http_requests_total", help: "HTTP requests by route, method and status.",
                                   labels: ["route", "method", "status"])
        latency = metrics.histogram("parley_http_request_duration_seconds", help: "HTTP request latency by route.",
                                    labels: ["route"])
    }

    /// The clock started when the connection read the request (`RequestContext.startedAt`).
    public func willHandle(_ request: HTTPRequest, _ context: inout RequestContext) {}

    private func seriesOfRoute(_ id: Int, name: String, method: HTTPMethod,
                               status: Int) -> (Counter, Histogram, logFields: [UInt8]) {
        let local = series.routes.value
        if id < local.histograms.count, let histogram = local.histograms[id],
           let entry = local.counters[id].first(where: { $0.method == method && $0.status == status }) {
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

    private func seriesByName(_ route: String, method: HTTPMethod, status: Int) -> (Counter, Histogram, logFields: [UInt8]?) {
        let key = SeriesCache.Key(route: route, method: method, status: status)
        let counter = series.counters.withLock { $0[key] } ?? {
            let created = requests.labels(route, method.rawValue, String(status))
            series.counters.withLock { $0[key] = created }
            return created
        }()
        let histogram = series.histograms.withLock { $0[route] } ?? {
            let created = latency.labels(route)
            series.histograms.withLock { $0[route] = created }
            return created
        }()
        return (counter, histogram, nil)
    }

    public func didHandle(_ request: HTTPRequest, _ context: RequestContext, _ response: inout HTTPResponse) {
        let elapsed = Instant.now().nanoseconds(since: context.startedAt)
        let route = context.routePattern.isEmpty ? "unmatched" : context.routePattern
        let (counter, histogram, logFields) = context.routeID >= 0
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

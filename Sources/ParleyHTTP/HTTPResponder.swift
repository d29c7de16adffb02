import Glibc
import ParleyNet
import ParleyObservability
import Synchronization

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
            wrapped.add(
                route.method, route.pattern, options: route.options,
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
    static func composeImmediate(
        _ middleware: [any HTTPMiddleware],
        endpoint: @escaping HTTPImmediateHandler
    ) -> HTTPImmediateHandler? {
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

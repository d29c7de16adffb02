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
    public func handle(_ request: HTTPRequest, _ context: RequestContext, next: HTTPHandler) async throws
        -> HTTPResponse
    {
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

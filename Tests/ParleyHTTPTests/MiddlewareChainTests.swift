import ParleyHTTP
import ParleyObservability
import Testing

/// An async middleware after the inline ones: it refuses requests without a header.
private struct RequireHeader: HTTPMiddleware {
    func handle(_ request: HTTPRequest, _ context: RequestContext, next: HTTPHandler) async throws -> HTTPResponse {
        guard request.headers["x-pass"] != nil else { throw APIError.validationFailed.with(message: "no pass") }
        return try await next(request, context)
    }
}

@Suite struct MiddlewareChainTests {
    private func respond(headers: HTTPHeaders, sink: LogSink) async -> HTTPResponse {
        var router = Router()
        router.get("/x") { _, context in .ok(["id": context.requestID]) }
        let metrics = MetricsRegistry()
        let responder = HTTPResponder(
            router: router,
            middleware: [
                RequestIDMiddleware(), AccessLogMiddleware(metrics: metrics, logAccess: true), RequireHeader(),
            ])
        let head = HTTPRequestHead(method: .GET, target: "/x", path: "/x", headers: headers)
        let request = HTTPRequest(head: head)
        let match = responder.router.match(method: .GET, path: "/x")
        var context = RequestContext(requestID: "", logger: Logger(sink: sink))
        context.routePattern = "/x"
        return await responder.respond(to: request, match: match, context: context)
    }

    @Test func inlineStepsWrapAsyncMiddlewareInOrder() async throws {
        let sink = LogSink(capturingAt: .debug)
        var headers = HTTPHeaders()
        headers.add(name: "X-Pass", value: "1")
        headers.add(name: "X-Request-Id", value: "client-7")
        let ok = await respond(headers: headers, sink: sink)
        #expect(ok.status == 200)
        #expect(ok.headers["x-request-id"] == "client-7")
        // The handler saw the id the request-id step set before the chain ran.
        #expect(String(decoding: ok.body, as: UTF8.self).contains(#""id":"client-7""#))
        #expect(sink.capturedText.contains(#""status":200"#))
        #expect(sink.capturedText.contains(#""request_id":"client-7""#))
    }

    @Test func errorsFromLaterMiddlewareAreMappedBeforeTheAccessLogSeesThem() async throws {
        let sink = LogSink(capturingAt: .debug)
        let refused = await respond(headers: HTTPHeaders(), sink: sink)
        #expect(refused.status == 400)
        #expect(String(decoding: refused.body, as: UTF8.self) == #"{"code":1002,"message":"no pass","data":null}"#)
        #expect(refused.headers["x-request-id"] != nil)
        #expect(sink.capturedText.contains(#""status":400"#))
    }
}

@Suite struct RequestIDGenerationTests {
    @Test func idsAreUniqueShortAndAcceptableAsIncomingIds() {
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let id = RequestIDMiddleware.generate()
            #expect(id.utf8.count <= 15)
            let parts = id.split(separator: "-")
            #expect(parts.count == 2 && parts[0].count == 6)
            #expect(
                id.utf8.allSatisfy {
                    $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66)
                })
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }
}

import ParleyHTTP
import Testing

/// Fields fixed per resource, in wire form once: what reaches the wire, where, and what is refused.
struct HTTPStaticHeadersTests {
    private let date = Array("Tue, 01 Dec 2026 00:00:00 GMT".utf8)

    private func serialize(_ response: HTTPResponse, method: HTTPMethod = .GET) -> String {
        String(
            decoding: ResponseSerializer().serialize(
                response, requestMethod: method, requestVersion: .http1_1,
                keepAlive: true, date: date), as: UTF8.self)
    }

    @Test func fieldsGoOutAfterTheResponsesOwnInUsualSpellingAndOrder() {
        var headers = HTTPHeaders()
        headers.add(name: "Cache-Control", value: "private, max-age=60")
        var response = HTTPResponse(status: 200, headers: headers, body: Array("body".utf8))
        response.staticHeaders = HTTPStaticHeaders([
            ("etag", "\"abc\""), ("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT"),
            ("content-type", "image/png"), ("x-content-type-options", "nosniff"),
        ])
        #expect(
            serialize(response) == "HTTP/1.1 200 OK\r\n"
                + "Cache-Control: private, max-age=60\r\n"
                + "ETag: \"abc\"\r\n"
                + "Last-Modified: Tue, 01 Dec 2026 00:00:00 GMT\r\n"
                + "Content-Type: image/png\r\n"
                + "X-Content-Type-Options: nosniff\r\n"
                + "Content-Length: 4\r\n"
                + "Date: Tue, 01 Dec 2026 00:00:00 GMT\r\n\r\nbody")
    }

    @Test func theyAreWrittenTheSameAsOrdinaryHeaders() {
        let fields = [
            ("etag", "\"x\""), ("content-disposition", "attachment; filename=\"a b.txt\""), ("accept-ranges", "bytes"),
        ]
        var ordinary = HTTPResponse(status: 206)
        for (name, value) in fields { ordinary.headers.add(name: name, value: value) }
        var fixed = HTTPResponse(status: 206)
        fixed.staticHeaders = HTTPStaticHeaders(fields.map { (name: $0.0, value: $0.1) })
        #expect(serialize(fixed) == serialize(ordinary))
        #expect(fixed.staticHeaders == HTTPStaticHeaders(fields.map { (name: $0.0, value: $0.1) }))
    }

    @Test func valuesCannotSplitTheResponse() {
        var response = HTTPResponse(status: 200)
        response.staticHeaders = HTTPStaticHeaders([
            ("content-disposition", "inline\r\nSet-Cookie: evil=1"), ("x-a", "\n\r"),
        ])
        let text = serialize(response)
        #expect(text.contains("Content-Disposition: inlineSet-Cookie: evil=1\r\n"))
        #expect(text.contains("X-A: \r\n"))
        #expect(!text.contains("\r\nSet-Cookie"))
    }

    @Test func noFieldsWriteNothing() {
        let empty = HTTPStaticHeaders()
        #expect(empty.isEmpty && empty.byteCount == 0 && empty == HTTPStaticHeaders([]))
        #expect(
            serialize(HTTPResponse(status: 204))
                == "HTTP/1.1 204 No Content\r\nDate: Tue, 01 Dec 2026 00:00:00 GMT\r\n\r\n")
    }

    /// The size bound counts them: a head made mostly of static fields still fits the buffer it is written into.
    @Test func largeFieldsFitTheSerializedSizeBound() {
        let long = String(repeating: "v", count: 8_000)
        var response = HTTPResponse(status: 200, body: Array("x".utf8))
        response.staticHeaders = HTTPStaticHeaders((0..<8).map { (name: "x-field-\($0)", value: long) })
        #expect(response.staticHeaders.byteCount == 8 * ("X-Field-0: ".utf8.count + long.utf8.count + 2))
        let bound = ResponseSerializer().serializedSizeBound(response, requestMethod: .GET, date: date)
        let text = serialize(response)
        #expect(text.utf8.count <= bound)
        #expect(text.contains("X-Field-7: \(long)\r\nContent-Length: 1\r\n"))
    }

    @Test func framingFieldsAreRefused() async {
        await #expect(processExitsWith: .failure) { _ = HTTPStaticHeaders([("content-length", "1")]) }
        await #expect(processExitsWith: .failure) { _ = HTTPStaticHeaders([("Date", "x")]) }
        await #expect(processExitsWith: .failure) { _ = HTTPStaticHeaders([("bad name", "x")]) }
    }
}

import Foundation
import Glibc
import ParleyHTTP
import ParleyTestSupport
import Testing

/// `HTTPResponse.file`: bodies sent with sendfile, ranges of them, HEAD, and pipelining after a large file.
@Suite(.serialized) struct FileResponseTests {
    static func makeFile(size: Int) throws -> (path: String, bytes: [UInt8]) {
        var bytes = [UInt8](repeating: 0, count: size)
        for i in 0..<size { bytes[i] = UInt8(truncatingIfNeeded: i &* 7 &+ i >> 9) }
        let path = NSTemporaryDirectory() + "parley-file-response-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    static func routes(path: String) -> (inout Router) -> Void {
        { router in
            router.get("/file") { request, _ in
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { throw APIError.notFound }
                var st = stat()
                fstat(fd, &st)
                let offset = Int64(try request.query.value(for: "offset") ?? "0") ?? 0
                let length = Int64(try request.query.value(for: "length") ?? "") ?? (Int64(st.st_size) - offset)
                var response = HTTPResponse(status: offset > 0 ? 206 : 200)
                response.headers.add(name: "Content-Type", value: "application/octet-stream")
                response.file = ResponseFile(descriptor: fd, offset: offset, length: length)
                return response
            }
            router.get("/hello") { _, _ in .ok(["greeting": "hello"]) }
        }
    }

    @Test func largeFileArrivesWholeAndTheConnectionStaysUsable() async throws {
        let (path, bytes) = try Self.makeFile(size: 9 << 20)
        defer { unlink(path) }
        let live = try await LiveServer(routes: Self.routes(path: path))
        let client = try RawHTTPClient(port: live.port)
        // Pipelined: the second answer must wait until every byte of the file is out.
        try client.send("GET /file HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.header("content-length") == String(bytes.count))
        #expect(response.body == bytes)
        let second = try client.readResponse()
        #expect(second.status == 200)
        #expect(second.bodyText.contains("hello"))
        await live.stop()
    }

    @Test func rangeOfAFileAndHeadWithoutBody() async throws {
        let (path, bytes) = try Self.makeFile(size: 100_000)
        defer { unlink(path) }
        let live = try await LiveServer(routes: Self.routes(path: path))
        let client = try RawHTTPClient(port: live.port)
        try client.send("GET /file?offset=1000&length=5000 HTTP/1.1\r\nHost: x\r\n\r\n")
        let partial = try client.readResponse()
        #expect(partial.status == 206)
        #expect(partial.body == Array(bytes[1000..<6000]))
        try client.send("HEAD /file HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readResponse(headRequest: true)
        #expect(head.status == 200)
        #expect(head.header("content-length") == "100000")
        #expect(head.body.isEmpty)
        try client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().bodyText.contains("hello"))
        await live.stop()
    }
}

/// TRACE and QUERY are methods the server knows but never serves: 405 with `Allow` on a known path, 404 elsewhere
/// (not 501, which schemathesis counts as a server error).
@Suite struct TraceMethodTests {
    @Test(arguments: ["TRACE", "QUERY"])
    func knownUnservedMethodOnAKnownPathIs405WithAllow(method: String) async throws {
        let live = try await LiveServer(routes: standardRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send("\(method) /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        let known = try client.readResponse()
        #expect(known.status == 405)
        #expect(known.header("allow")?.contains("GET") == true)
        #expect(known.header("allow")?.contains(method) == false)
        try client.send("\(method) /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().status == 404)
        await live.stop()
    }

    /// QUERY carries content: the 405 is known from the head, so the body is not read; the answer closes the
    /// connection (nothing after an unread body can be framed), and the next request goes on a new one.
    @Test func queryWithContentIsRefusedAndTheConnectionCloses() async throws {
        let live = try await LiveServer(routes: standardRoutes)
        let client = try RawHTTPClient(port: live.port)
        try client.send(
            "QUERY /hello HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n"
                + #"{"q":"x"}"#)
        let refused = try client.readResponse()
        #expect(refused.status == 405)
        #expect(refused.header("connection") == "close")
        #expect(client.waitForClose())
        let next = try RawHTTPClient(port: live.port)
        try next.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try next.readResponse().bodyText.contains("hello"))
        await live.stop()
    }
}

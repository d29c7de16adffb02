import Foundation
import Glibc
import ParleyHTTPClient
import ParleyTestSupport
import Testing

/// The client against the in-process `TestHTTPServer` (HTTP/1.1).
@Suite struct HTTPClientTests {
    @Test func getReturnsStatusHeadersAndBody() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }

        let response = try await client.execute(HTTPClientRequest(url: server.baseURL + "/hello"))
        #expect(response.status == 200)
        #expect(response.body == Array("hello world".utf8))
        #expect(response.header("Content-Type") == "text/plain")
        #expect(response.header("content-length") == "11")
        #expect(response.httpVersion == .http1_1)
    }

    @Test func errorStatusIsAResponseNotAnError() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }

        let response = try await client.execute(HTTPClientRequest(url: server.baseURL + "/missing"))
        #expect(response.status == 404)
        #expect(response.body == Array("not found".utf8))
    }

    @Test func headersRoundTripInOrderWithEmptyValues() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }

        let request = HTTPClientRequest(
            method: "DELETE", url: server.baseURL + "/echo",
            headers: [("X-One", "1"), ("x-two", "two words"), ("X-Empty", "")])
        let response = try await client.execute(request)
        #expect(response.status == 200)
        #expect(response.body == Array("DELETE".utf8))
        let echoed = response.headers.filter { $0.0.hasPrefix("x-echo-") }
        #expect(echoed.map(\.0) == ["x-echo-one", "x-echo-two", "x-echo-empty"])
        #expect(echoed.map(\.1) == ["1", "two words", ""])
    }

    @Test func headSendsNoBodyAndReadsNone() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }

        let response = try await client.execute(
            HTTPClientRequest(
                method: "HEAD", url: server.baseURL + "/echo",
                headers: [("X-Probe", "yes")]))
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(response.header("x-echo-probe") == "yes")
    }

    @Test func putOfAFileRangeSendsExactlyThoseBytes() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        // Larger than curl's 1 MiB "Expect: 100-continue" threshold and its upload buffer.
        let content = (0..<(3 * 1024 * 1024 + 17)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 12) }
        let path = try temporaryFile(content)
        defer { unlink(path) }

        let request = HTTPClientRequest(
            method: "PUT", url: server.baseURL + "/upload/range",
            headers: [("Content-Type", "application/octet-stream")],
            body: .file(path: path, offset: 100, length: 2 * 1024 * 1024 + 5))
        let response = try await client.execute(request)
        #expect(response.status == 201)
        let received = try #require(server.received(path: "/upload/range"))
        #expect(received.body == Array(content[100..<(100 + 2 * 1024 * 1024 + 5)]))
        #expect(received.header("content-length") == "\(2 * 1024 * 1024 + 5)")
        #expect(received.header("content-type") == "application/octet-stream")
        #expect(received.header("expect") == nil)
    }

    @Test func postOfBytesAndPutWithoutBody() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }

        let posted = try await client.execute(
            HTTPClientRequest(
                method: "POST", url: server.baseURL + "/upload/post",
                body: .bytes(Array("a=1&b=2".utf8))))
        #expect(posted.status == 201)
        let post = try #require(server.received(path: "/upload/post"))
        #expect(post.method == "POST")
        #expect(post.body == Array("a=1&b=2".utf8))
        #expect(post.header("content-type") == nil)

        let put = try await client.execute(HTTPClientRequest(method: "PUT", url: server.baseURL + "/upload/empty"))
        #expect(put.status == 201)
        #expect(server.received(path: "/upload/empty")?.header("content-length") == "0")
    }

    @Test func missingOrShortFileBodyIsRefusedBeforeSending() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let path = try temporaryFile([1, 2, 3])
        defer { unlink(path) }

        for body in [
            HTTPClientBody.file(path: "/nonexistent/parley-upload", offset: 0, length: 1),
            .file(path: path, offset: 1, length: 3),
        ] {
            await #expect {
                _ = try await client.execute(
                    HTTPClientRequest(method: "PUT", url: server.baseURL + "/upload/x", body: body))
            } throws: { error in
                if case .bodyUnreadable = error as? HTTPClientError { return true }
                return false
            }
        }
        #expect(server.requestsServed == 0)
    }

    @Test func sequentialRequestsReuseOneConnection() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }

        for _ in 0..<5 {
            #expect(try await client.execute(HTTPClientRequest(url: server.baseURL + "/hello")).status == 200)
        }
        #expect(server.connectionsAccepted == 1)
    }

    @Test func fiftyConcurrentRequestsAllComplete() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }

        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<50 {
                group.addTask {
                    let path = index % 2 == 0 ? "/slow?ms=200" : "/bytes?n=\(index * 1000)"
                    let response = try await client.execute(HTTPClientRequest(url: server.baseURL + path))
                    if index % 2 == 1 { #expect(response.body == TestHTTPServer.pattern(count: index * 1000)) }
                    return response.status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.count == 50)
        #expect(statuses.allSatisfy { $0 == 200 })
        // The 200 ms requests overlapped rather than queueing behind each other (counted by the server, not by
        // the clock: the two cores are shared with other test processes).
        #expect(server.maxConcurrentRequests >= 10)
    }

    @Test func connectionRefusedIsConnectFailed() async throws {
        let port = ChildProcess.unusedPort()
        let client = HTTPClient()
        defer { client.shutdown() }

        await #expect {
            _ = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/", timeout: .seconds(5)))
        } throws: { error in
            guard case .connectFailed(let message) = error as? HTTPClientError else { return false }
            return !message.isEmpty
        }
    }

    @Test func slowServerTimesOut() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }

        // `.timedOut`, not the 60 s answer: the error is the proof (a wall-clock bound would measure the load).
        await #expect {
            _ = try await client.execute(
                HTTPClientRequest(url: server.baseURL + "/slow?ms=60000", timeout: .milliseconds(300)))
        } throws: { error in
            if case .timedOut = error as? HTTPClientError { return true }
            return false
        }
    }

    @Test func responseOverTheLimitFailsWithAndWithoutContentLength() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient(maxResponseBytes: 1000)
        defer { client.shutdown() }

        #expect(try await client.execute(HTTPClientRequest(url: server.baseURL + "/bytes?n=1000")).body.count == 1000)
        for path in ["/bytes?n=5000", "/stream?n=200000"] {
            await #expect(throws: HTTPClientError.responseTooLarge(limit: 1000)) {
                _ = try await client.execute(HTTPClientRequest(url: server.baseURL + path))
            }
        }
        // A HEAD response describes a body it does not carry: no limit applies (S3's HEAD of a large object).
        let head = try await client.execute(HTTPClientRequest(method: "HEAD", url: server.baseURL + "/bytes?n=5000"))
        #expect(head.status == 200)
        #expect(head.header("content-length") == "5000")
    }

    @Test func malformedRequestsAreRefused() async throws {
        let client = HTTPClient()
        defer { client.shutdown() }

        let requests = [
            HTTPClientRequest(url: "http://127.0.0.1:1/", headers: [("X-Split", "a\r\nInjected: yes")]),
            HTTPClientRequest(url: "http://127.0.0.1:1/", headers: [("Bad Name", "x")]),
            HTTPClientRequest(method: "GE T", url: "http://127.0.0.1:1/"),
            HTTPClientRequest(url: "file:///etc/passwd"),
            HTTPClientRequest(url: "not a url"),
        ]
        for request in requests {
            await #expect {
                _ = try await client.execute(request)
            } throws: { error in
                if case .invalidRequest = error as? HTTPClientError { return true }
                return false
            }
        }
    }

    @Test func cancellingTheTaskAbandonsTheRequest() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }

        let task = Task {
            try await client.execute(HTTPClientRequest(url: server.baseURL + "/slow?ms=30000", timeout: .seconds(60)))
        }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        // Abandoned: a request that went on would end with the server's 200 after 30 s, not with `.cancelled` (the
        // error is the proof; a wall-clock bound would only measure the machine's load).
        await #expect(throws: HTTPClientError.cancelled) { try await task.value }
        // The client still works afterwards.
        #expect(try await client.execute(HTTPClientRequest(url: server.baseURL + "/hello")).status == 200)
    }

    @Test func shutdownFailsRequestsInFlightAndLaterOnes() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let client = HTTPClient()

        let inFlight = Task {
            try await client.execute(HTTPClientRequest(url: server.baseURL + "/slow?ms=3000"))
        }
        try await Task.sleep(for: .milliseconds(100))
        client.shutdown()
        await #expect(throws: HTTPClientError.shutdown) { try await inFlight.value }
        await #expect(throws: HTTPClientError.shutdown) {
            try await client.execute(HTTPClientRequest(url: server.baseURL + "/hello"))
        }
        client.shutdown() // a second call is harmless
    }
}

/// Writes `bytes` to a new temporary file and returns its path.
func temporaryFile(_ bytes: [UInt8]) throws -> String {
    var template = Array("/tmp/parley-http-client-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
    defer { close(fd) }
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written > 0 else { throw POSIXError(.init(rawValue: errno)!) }
        offset += written
    }
    return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

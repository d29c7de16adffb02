import Foundation
import Glibc
import Synchronization

/// A small blocking HTTP/1.1 server on 127.0.0.1 (one thread per connection, keep-alive, Content-Length bodies),
/// enough to see what the client really sends. Routes:
///   GET  /hello            200 "hello world"
///   any  /echo             200; each request field `x-...` comes back as `x-echo-...`; body = the method
///   PUT  /upload/...       201; the body is recorded under the path (see `received(path:)`)
///   GET  /slow?ms=N        200 after N ms
///   GET  /bytes?n=N        200 with N bytes (Content-Length); HEAD: only the Content-Length
///   GET  /stream?n=N       200 with N bytes, no Content-Length (ends by closing)
///   else                   404
final class TestHTTPServer: @unchecked Sendable {
    struct Request {
        var method: String
        var target: String
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? { headers.first { $0.0 == name.lowercased() }?.1 }
        var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "") }
        func query(_ name: String) -> String? {
            guard let query = target.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
            for pair in query.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.first.map(String.init) == name { return parts.count > 1 ? String(parts[1]) : "" }
            }
            return nil
        }
    }

    private struct State {
        var uploads: [String: Request] = [:]
        var connections = 0
        var requests = 0
        var inFlight = 0
        var maxInFlight = 0
        var sockets: Set<Int32> = []
    }

    let port: Int
    private let listenFD: Int32
    private let state = Mutex(State())

    init() throws {
        let listenFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listenFD >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
        var one: Int32 = 1
        setsockopt(listenFD, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listenFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listenFD, 256) == 0 else { throw POSIXError(.init(rawValue: errno)!) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listenFD, $0, &length) }
        }
        self.listenFD = listenFD
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The last body PUT or POSTed to `path`.
    func received(path: String) -> Request? { state.withLock { $0.uploads[path] } }
    var connectionsAccepted: Int { state.withLock { $0.connections } }
    var requestsServed: Int { state.withLock { $0.requests } }
    /// The most requests being answered at one time.
    var maxConcurrentRequests: Int { state.withLock { $0.maxInFlight } }

    /// Stops accepting and closes every open connection.
    func stop() {
        shutdown(listenFD, Int32(SHUT_RDWR))
        let open = state.withLock { $0.sockets }
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    deinit { close(listenFD) }

    private func acceptLoop() {
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            state.withLock {
                $0.connections += 1
                $0.sockets.insert(fd)
            }
            Thread.detachNewThread { [self] in
                serve(fd)
                state.withLock { _ = $0.sockets.remove(fd) }
                close(fd)
            }
        }
    }

    private func serve(_ fd: Int32) {
        var buffer: [UInt8] = []
        while let request = readRequest(fd, &buffer) {
            state.withLock {
                $0.requests += 1
                $0.inFlight += 1
                $0.maxInFlight = max($0.maxInFlight, $0.inFlight)
            }
            let keepOpen = respond(to: request, on: fd)
            state.withLock { $0.inFlight -= 1 }
            guard keepOpen else { return }
            if request.header("connection")?.lowercased() == "close" { return }
        }
    }

    /// Answers; false when the connection must close afterwards.
    private func respond(to request: Request, on fd: Int32) -> Bool {
        switch (request.method, request.path) {
        case ("GET", "/hello"):
            send(fd, status: 200, headers: [("Content-Type", "text/plain")], body: Array("hello world".utf8))
        case (_, "/echo"):
            let echoed = request.headers.filter { $0.0.hasPrefix("x-") }.map { ("x-echo-" + $0.0.dropFirst(2), $0.1) }
            send(
                fd, status: 200, headers: echoed, body: request.method == "HEAD" ? [] : Array(request.method.utf8),
                contentLength: request.method == "HEAD" ? request.method.utf8.count : nil)
        case ("PUT", let path) where path.hasPrefix("/upload/"), ("POST", let path) where path.hasPrefix("/upload/"):
            state.withLock { $0.uploads[path] = request }
            send(fd, status: 201, headers: [], body: Array("\(request.body.count)".utf8))
        case ("GET", "/slow"):
            usleep(UInt32(Int(request.query("ms") ?? "0")! * 1000))
            send(fd, status: 200, headers: [], body: Array("slow".utf8))
        case ("GET", "/bytes"):
            send(fd, status: 200, headers: [], body: Self.pattern(count: Int(request.query("n") ?? "0")!))
        case ("HEAD", "/bytes"):
            send(fd, status: 200, headers: [], body: [], contentLength: Int(request.query("n") ?? "0")!)
        case ("GET", "/stream"):
            let body = Self.pattern(count: Int(request.query("n") ?? "0")!)
            writeAll(fd, Array("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".utf8) + body)
            return false
        default:
            send(fd, status: 404, headers: [("Content-Type", "text/plain")], body: Array("not found".utf8))
        }
        return true
    }

    /// Deterministic bytes that differ from position to position.
    static func pattern(count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) } }

    private func send(_ fd: Int32, status: Int, headers: [(String, String)], body: [UInt8], contentLength: Int? = nil) {
        var head = "HTTP/1.1 \(status) \(status == 404 ? "Not Found" : "OK")\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(contentLength ?? body.count)\r\n\r\n"
        writeAll(fd, Array(head.utf8) + body)
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { return }
            offset += written
        }
    }

    private func readRequest(_ fd: Int32, _ buffer: inout [UInt8]) -> Request? {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while true {
            if let range = buffer.firstRange(of: terminator) {
                headEnd = range.upperBound
                break
            }
            guard fill(fd, &buffer) else { return nil }
        }
        guard let headEnd else { return nil }
        let lines = String(decoding: buffer[..<(headEnd - 4)], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3 else { return nil }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        buffer.removeFirst(headEnd)
        var request = Request(
            method: String(requestLine[0]), target: String(requestLine[1]), headers: headers, body: [])
        let length = Int(request.header("content-length") ?? "0") ?? 0
        if length > 0, request.header("expect")?.lowercased() == "100-continue" {
            writeAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        while buffer.count < length {
            guard fill(fd, &buffer) else { return nil }
        }
        request.body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return request
    }

    private func fill(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }
}

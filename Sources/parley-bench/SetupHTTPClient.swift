import CParleyLinux
import Glibc
import ParleyJSON

/// A blocking HTTP/1.1 client for the setup calls only (logins, registration, group creation): one keep-alive
/// socket, `Content-Length` bodies (Parley answers every route with one), a receive/send timeout on the socket so
/// that a stuck server fails the run instead of hanging it. The load itself never goes through here.
///
/// One instance per thread.
final class SetupHTTPClient {
    struct Response {
        var status: Int
        var body: [UInt8]

        /// The envelope's `data`, or an error naming the status and the server's message.
        func data(_ what: String) throws(BenchError) -> JSONValue {
            let json = try? JSONValue.parse(body)
            guard status / 100 == 2, let json, json["code"]?.int64Value == 0, let data = json["data"] else {
                let text = String(decoding: body.prefix(300), as: UTF8.self)
                throw BenchError("\(what): HTTP \(status): \(text)")
            }
            return data
        }
    }

    let host: String
    let port: UInt16
    let timeoutSeconds: Int
    private var fd: Int32 = -1
    private var buffer: [UInt8] = []

    init(host: String, port: UInt16, timeoutSeconds: Int = 30) {
        self.host = host
        self.port = port
        self.timeoutSeconds = timeoutSeconds
    }

    deinit { disconnect() }

    func disconnect() {
        if fd >= 0 { close(fd) }
        fd = -1
        buffer = []
    }

    /// Sends one request and reads the whole answer. A keep-alive socket the server closed in the meantime is
    /// reopened once.
    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = [])
        throws(BenchError) -> Response
    {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Length: \(body.count)\r\n"
        if !body.isEmpty { head += "Content-Type: application/json\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let bytes = Array((head + "\r\n").utf8) + body
        let reused = fd >= 0
        do {
            return try exchange(bytes)
        } catch  where reused {
            disconnect()
            return try exchange(bytes)
        }
    }

    private func exchange(_ bytes: [UInt8]) throws(BenchError) -> Response {
        if fd < 0 { try connect() }
        try sendAll(bytes)
        var headEnd: Int?
        while headEnd == nil {
            try fill()
            headEnd = ByteSearch.firstIndex(of: ByteSearch.headEnd, in: buffer)
            if headEnd == nil && buffer.count > 64 * 1024 { throw failure("answer head over 64 KiB") }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw failure("malformed status line") }
        var length = 0
        var closeAfter = false
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            if name == "content-length" { length = Int(value) ?? 0 }
            if name == "connection" && value.lowercased() == "close" { closeAfter = true }
        }
        let bodyStart = headEnd! + 4
        while buffer.count < bodyStart + length { try fill() }
        let body = Array(buffer[bodyStart..<(bodyStart + length)])
        buffer.removeSubrange(0..<(bodyStart + length))
        if closeAfter { disconnect() }
        return Response(status: status, body: body)
    }

    private func connect() throws(BenchError) {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socketFD >= 0 else { throw failure("socket: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(socketFD, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socketFD, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(socketFD, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        guard var address = IPv4Address(host: host, port: port) else {
            close(socketFD)
            throw BenchError("not an IPv4 address: \(host)")
        }
        let rc = address.withSockaddr { Glibc.connect(socketFD, $0, $1) }
        guard rc == 0 else {
            let code = errno
            close(socketFD)
            throw BenchError("connect to \(host):\(port): \(String(cString: strerror(code)))")
        }
        fd = socketFD
    }

    private func sendAll(_ bytes: [UInt8]) throws(BenchError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw failure("send: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    private func fill() throws(BenchError) {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0..<n])
                return
            }
            if n < 0 && errno == EINTR { continue }
            let reason = n == 0 ? "connection closed by the server" : String(cString: strerror(errno))
            throw failure(reason)
        }
    }

    private func failure(_ reason: String) -> BenchError {
        disconnect()
        return BenchError("HTTP to \(host):\(port): \(reason)")
    }
}

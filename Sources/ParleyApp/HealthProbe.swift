import Glibc

/// `parley healthcheck`: one `GET /healthz` to the local server with a deadline, exit status 0 on a 200.
/// It exists so the container image's `HEALTHCHECK` needs no curl (one binary less to patch in the runtime image).
public enum HealthProbe {
    public struct Failure: Error, CustomStringConvertible, Equatable {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// The address to probe for a listen address: the wildcards are reached over loopback.
    public static func probeHost(forListenHost host: String) -> String {
        switch host {
        case "", "0.0.0.0", "localhost": return "127.0.0.1"
        case "::", "[::]": return "::1"
        default: return host
        }
    }

    /// The request bytes: HTTP/1.1 needs `Host` (RFC 9112 §3.2); `Connection: close` lets the server end the exchange.
    public static func request(path: String) -> [UInt8] {
        Array(
            "GET \(path) HTTP/1.1\r\nHost: localhost\r\nUser-Agent: parley-healthcheck\r\nConnection: close\r\n\r\n"
                .utf8)
    }

    /// The status code of the HTTP/1.x status line that starts `response` (RFC 9112 §4), or nil when the
    /// line is incomplete or malformed.
    public static func statusCode(_ response: [UInt8]) -> Int? {
        guard let end = response.firstIndex(of: UInt8(ascii: "\r")) else { return nil }
        let line = response[..<end]
        let prefix = Array("HTTP/1.".utf8)
        guard line.count >= 12, Array(line.prefix(prefix.count)) == prefix,
            line[line.startIndex + 8] == UInt8(ascii: " ")
        else { return nil }
        let digits = line[(line.startIndex + 9)..<(line.startIndex + 12)]
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            line.count == 12 || line[line.startIndex + 12] == UInt8(ascii: " ")
        else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// Sends `GET path` to host:port (an IP literal, as `PARLEY_HTTP_HOST` is) and returns the status code.
    /// Blocking I/O bounded by `timeoutSeconds` per call (connect, write, each read): a probe, not a client.
    public static func check(
        host: String, port: UInt16, path: String = "/healthz",
        timeoutSeconds: Int = 2
    ) throws(Failure) -> Int {
        let target = probeHost(forListenHost: host)
        var storage = sockaddr_storage()
        let length: socklen_t
        if target.contains(":") {
            var addr = sockaddr_in6()
            addr.sin6_family = sa_family_t(AF_INET6)
            addr.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, target, &addr.sin6_addr) == 1 else {
                throw Failure(description: "not an IP address: \(target)")
            }
            withUnsafeBytes(of: addr) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = port.bigEndian
            guard inet_pton(AF_INET, target, &addr.sin_addr) == 1 else {
                throw Failure(description: "not an IP address: \(target)")
            }
            withUnsafeBytes(of: addr) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        let fd = socket(Int32(storage.ss_family), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // On Linux SO_SNDTIMEO also bounds connect(2) (socket(7)).
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let peer = target.contains(":") ? "[\(target)]:\(port)" : "\(target):\(port)"
        let connected = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard connected == 0 else { throw Failure(description: "connect \(peer): \(String(cString: strerror(errno)))") }
        let bytes = request(path: path)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send to \(peer): \(String(cString: strerror(errno)))") }
            sent += n
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        // The status line is all we need; stop at it, at EOF or past a sane status-line length.
        while !response.contains(UInt8(ascii: "\r")), response.count < 4096 {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "read from \(peer): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            response += chunk[..<n]
        }
        guard let status = statusCode(response) else {
            throw Failure(description: "no HTTP status line from \(peer)")
        }
        return status
    }
}

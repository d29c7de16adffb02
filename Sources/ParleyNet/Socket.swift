import CParleyLinux
import Glibc

/// A failed system call, with errno.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var errno: Int32

    public init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "\(operation) failed: \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// Thin helpers over Glibc sockets. Every descriptor is non-blocking and close-on-exec.
public enum Socket {
    /// Binds a listening TCP socket. `reusePort` lets one listener per event loop share the port,
    /// so the kernel spreads new connections across loops.
    public static func listen(host: String, port: UInt16, reusePort: Bool, backlog: Int32 = 4096) throws(SocketError)
        -> (fd: Int32, port: UInt16)
    {
        var storage = sockaddr_storage()
        var length: socklen_t
        let family: Int32
        if host.contains(":") {
            family = AF_INET6
            var addr = sockaddr_in6()
            addr.sin6_family = sa_family_t(AF_INET6)
            addr.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &addr.sin6_addr) == 1 else {
                throw SocketError(operation: "inet_pton(\(host))", errno: EINVAL)
            }
            withUnsafeBytes(of: addr) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            family = AF_INET
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = port.bigEndian
            let name = host == "localhost" ? "127.0.0.1" : host
            guard inet_pton(AF_INET, name, &addr.sin_addr) == 1 else {
                throw SocketError(operation: "inet_pton(\(host))", errno: EINVAL)
            }
            withUnsafeBytes(of: addr) { src in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: src) } }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        }
        let fd = socket(
            family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw SocketError(operation: "socket", errno: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if reusePort { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        if bound != 0 {
            let err = errno
            close(fd)
            throw SocketError(operation: "bind(\(host):\(port))", errno: err)
        }
        if Glibc.listen(fd, backlog) != 0 {
            let err = errno
            close(fd)
            throw SocketError(operation: "listen", errno: err)
        }
        return (fd, try localPort(fd))
    }

    public static func localPort(_ fd: Int32) throws(SocketError) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        if rc != 0 { throw SocketError(operation: "getsockname", errno: errno) }
        if Int32(storage.ss_family) == AF_INET6 {
            return withUnsafeBytes(of: storage) { UInt16(bigEndian: $0.load(as: sockaddr_in6.self).sin6_port) }
        }
        return withUnsafeBytes(of: storage) { UInt16(bigEndian: $0.load(as: sockaddr_in.self).sin_port) }
    }

    /// What one `accept4` call gave.
    public enum AcceptResult: Sendable, Equatable {
        case accepted(fd: Int32, peer: String)
        /// accept4 failed with this errno: EAGAIN when nothing is waiting, EMFILE when the process is out of
        /// descriptors, ... (`AcceptBackoff` in ParleyHTTP says what each one means for the listener).
        case failed(errno: Int32)
    }

    /// Accepts one pending connection (non-blocking, close-on-exec, TCP_NODELAY).
    public static func accept(_ listener: Int32) -> AcceptResult {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                accept4(listener, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            }
        }
        if fd < 0 { return .failed(errno: errno) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return .accepted(fd: fd, peer: address(of: storage))
    }

    static func address(of storage: sockaddr_storage) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if Int32(storage.ss_family) == AF_INET6 {
            var addr = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
            inet_ntop(AF_INET6, &addr.sin6_addr, &buffer, socklen_t(buffer.count))
        } else {
            var addr = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
            inet_ntop(AF_INET, &addr.sin_addr, &buffer, socklen_t(buffer.count))
        }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Makes the process immune to SIGPIPE; writes to closed sockets then fail with EPIPE instead.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}

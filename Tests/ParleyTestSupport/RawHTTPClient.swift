import Foundation
import Glibc

/// A deliberately simple blocking HTTP/1.1 client for tests: sends exact bytes (malformed ones too)
/// and parses answers. Every read has a timeout so a broken server fails the test instead of hanging it.
public final class RawHTTPClient: @unchecked Sendable {
    public struct Response: Sendable {
        public var status: Int
        public var headers: [(String, String)]
        public var body: [UInt8]
        public var bodyText: String { String(decoding: body, as: UTF8.self) }
        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public private(set) var fd: Int32
    private var buffer: [UInt8] = []

    public init(port: UInt16, timeoutSeconds: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let code = errno
            // Closed here and marked, so that deinit (which still runs for a class whose init throws after its
            // properties are set) does not close the number again: by then another socket of this process,
            // a test server's for instance, may have it.
            Glibc.close(fd)
            fd = -1
            throw Failure(description: "connect to 127.0.0.1:\(port) failed: errno \(code)")
        }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard n > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            offset += n
        }
    }

    /// Reads more bytes; false at EOF.
    @discardableResult
    func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n == 0 { return false }
        if n < 0 {
            if errno == ECONNRESET { return false }
            throw Failure(description: "recv failed or timed out: errno \(errno)")
        }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    /// Reads one response; `headRequest` means no body follows whatever Content-Length says.
    public func readResponse(headRequest: Bool = false) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if let range = findSubsequence(separator) { headEnd = range; break }
            guard try fill() else { throw Failure(description: "connection closed before a complete response head") }
        }
        let headBytes = buffer[0..<headEnd!]
        let lines = String(decoding: headBytes, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line: \(lines[0])")
        }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        buffer.removeFirst(headEnd! + 4)
        var response = Response(status: status, headers: headers, body: [])
        if headRequest || status < 200 || status == 204 || status == 304 { return response }
        if let lengthText = response.header("content-length"), let length = Int(lengthText) {
            while buffer.count < length {
                guard try fill() else { throw Failure(description: "connection closed inside the body") }
            }
            response.body = Array(buffer[0..<length])
            buffer.removeFirst(length)
        } else {
            while try fill() {}
            response.body = buffer
            buffer.removeAll()
        }
        return response
    }

    /// Reads exactly `count` raw bytes (those already buffered first), e.g. after a protocol upgrade.
    public func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else {
                throw Failure(description: "connection closed after \(buffer.count) of \(count) bytes")
            }
        }
        let out = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return out
    }

    /// True when the server closed the connection (EOF) within the timeout.
    public func waitForClose() -> Bool {
        while true {
            do {
                if !(try fill()) { return true }
            } catch {
                return false
            }
        }
    }

    private func findSubsequence(_ needle: [UInt8]) -> Int? {
        guard buffer.count >= needle.count else { return nil }
        for i in 0...(buffer.count - needle.count) where buffer[i] == needle[0] {
            if Array(buffer[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }

    public func close() { shutdown(fd, Int32(SHUT_RDWR)) }
}

/// Runs blocking work (socket reads in tests) on its own thread, so that it never occupies one of the
/// few cooperative-pool threads the server's own tasks need.
public func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

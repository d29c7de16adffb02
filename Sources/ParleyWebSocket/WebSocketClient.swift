import Glibc
import ParleyNet

/// A minimal blocking WebSocket client (RFC 6455, client side) for tests, `parley-bench` and a chat CLI.
///
/// One socket, one thread: every receive waits with a deadline, so a silent server fails the caller
/// instead of hanging it. Frames are masked with a fresh key each (§5.3); fragmented messages are
/// reassembled and text is checked for UTF-8; pings are answered automatically unless turned off.
/// For thousands of connections, drive ``WebSocketClientHandshake``, ``WebSocketFrameParser`` (role
/// `.client`) and ``WebSocketFrameEncoder/client`` from an event loop instead.
///
/// Not thread-safe: use an instance from one thread at a time (it is `Sendable` only so that it can be
/// handed to the thread that uses it).
public final class WebSocketClient {
    public enum Message: Sendable, Hashable {
        case text(String)
        case binary([UInt8])
    }

    public enum Event: Sendable, Hashable {
        case text(String)
        case binary([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        /// The server's Close (code nil: it had none). Our answer has already been sent.
        case close(code: WebSocketCloseCode?, reason: String)
    }

    public private(set) var fd: Int32
    /// The 101 answer.
    public let handshakeResponse: WebSocketClientHandshake.Response
    /// Answer every ping with a pong as it is received.
    public var answersPings = true
    public let maxMessageBytes: Int
    public private(set) var closeSent = false
    public private(set) var closeReceived = false

    private var parser: WebSocketFrameParser
    private var fragments: [UInt8] = []
    private var fragmentOpcode: WebSocketOpcode?
    private var validator = UTF8Validator()
    private let defaultTimeout: Duration

    /// Connects to `host:port` (IPv4), performs the handshake on `path`, and checks `Sec-WebSocket-Accept`.
    public init(
        host: String = "127.0.0.1", port: UInt16, path: String = "/", headers: [(String, String)] = [],
        timeout: Duration = .seconds(10), maxMessageBytes: Int = 64 << 20
    ) throws(WebSocketClientError) {
        self.maxMessageBytes = maxMessageBytes
        defaultTimeout = timeout
        parser = WebSocketFrameParser(role: .client, maxFramePayloadBytes: maxMessageBytes)
        fd = try Self.connect(host: host, port: port, timeout: timeout)
        let handshake = WebSocketClientHandshake()
        do throws(WebSocketClientError) {
            try Self.sendAll(fd, handshake.request(host: "\(host):\(port)", path: path, extraHeaders: headers))
            let deadline = Instant.now() + timeout
            var received: [UInt8] = []
            var headEnd: Int?
            while headEnd == nil {
                try Self.fill(fd, into: &received, deadline: deadline)
                headEnd = Self.find([13, 10, 13, 10], in: received)
                if headEnd == nil && received.count > 64 * 1024 {
                    throw WebSocketClientError(.handshakeInvalid, "response head over 64 KiB")
                }
            }
            guard let response = WebSocketClientHandshake.parseResponseHead(received[..<headEnd!]) else {
                throw WebSocketClientError(.handshakeInvalid, "malformed response head")
            }
            var rest = Array(received[(headEnd! + 4)...])
            if response.status != 101 {
                // Read the (small) error body for the caller: the envelope says why.
                let length = Int(response.header("content-length") ?? "") ?? 0
                while rest.count < min(length, 1 << 20) {
                    do { try Self.fill(fd, into: &rest, deadline: deadline) } catch { break }
                }
                var error = WebSocketClientError(
                    .handshakeRejected(status: response.status),
                    "the server answered \(response.status) instead of 101")
                error.body = Array(rest.prefix(length))
                throw error
            }
            try handshake.validate(response)
            handshakeResponse = response
            if !rest.isEmpty { parser.append(contentsOf: rest) }
        } catch {
            Glibc.close(fd)
            fd = -1
            throw error
        }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    // MARK: Sending

    public func send(text: String) throws(WebSocketClientError) {
        try sendRaw(WebSocketFrameEncoder.client.encodeText(text))
    }

    public func send(binary: [UInt8]) throws(WebSocketClientError) {
        try sendFrame(opcode: .binary, payload: binary)
    }

    public func sendPing(_ payload: [UInt8] = []) throws(WebSocketClientError) {
        try sendFrame(opcode: .ping, payload: payload)
    }

    public func sendPong(_ payload: [UInt8] = []) throws(WebSocketClientError) {
        try sendFrame(opcode: .pong, payload: payload)
    }

    /// Sends a Close (code nil: an empty Close). Call ``close(code:reason:timeout:)`` for the whole handshake.
    public func sendClose(code: WebSocketCloseCode? = .normalClosure, reason: String = "") throws(WebSocketClientError)
    {
        closeSent = true
        try sendRaw(WebSocketFrameEncoder.client.encodeClose(code: code, reason: reason))
    }

    /// Any single masked frame, e.g. one fragment of a message.
    public func sendFrame(
        opcode: WebSocketOpcode, payload: [UInt8], fin: Bool = true,
        reservedBits: UInt8 = 0
    ) throws(WebSocketClientError) {
        try sendRaw(
            WebSocketFrameEncoder.client.encode(
                opcode: opcode, payload: payload, fin: fin,
                reservedBits: reservedBits))
    }

    /// Bytes as they are, e.g. a deliberately broken frame.
    public func sendRaw(_ bytes: [UInt8]) throws(WebSocketClientError) {
        guard fd >= 0 else { throw WebSocketClientError(.io, "the client is disconnected") }
        try Self.sendAll(fd, bytes)
    }

    // MARK: Receiving

    /// The next event: a whole message or a control frame. Throws `.timeout` when nothing complete arrives
    /// in time, `.connectionClosed` at EOF, `.protocolError` when the server broke the protocol (a Close
    /// with the code has then been sent).
    public func receiveEvent(timeout: Duration? = nil) throws(WebSocketClientError) -> Event {
        let deadline = Instant.now() + (timeout ?? defaultTimeout)
        while true {
            do {
                if let frame = try parser.next() {
                    if let event = try handle(frame) { return event }
                    continue
                }
            } catch {
                try? sendClose(code: error.closeCode, reason: error.reason)
                throw WebSocketClientError(.protocolError(error.closeCode), error.reason)
            }
            guard fd >= 0 else { throw WebSocketClientError(.connectionClosed, "disconnected") }
            var chunk: [UInt8] = []
            try Self.fill(fd, into: &chunk, deadline: deadline)
            parser.append(contentsOf: chunk)
        }
    }

    /// The next data message, skipping pings and pongs. A Close throws `.closed(code:reason:)`.
    public func receiveMessage(timeout: Duration? = nil) throws(WebSocketClientError) -> Message {
        let deadline = Instant.now() + (timeout ?? defaultTimeout)
        while true {
            let remaining = deadline.since(.now())
            switch try receiveEvent(timeout: remaining) {
            case .text(let text): return .text(text)
            case .binary(let bytes): return .binary(bytes)
            case .ping, .pong: continue
            case .close(let code, let reason):
                let described = code.map { String($0.rawValue) } ?? "no code"
                throw WebSocketClientError(.closed(code: code, reason: reason), "the server closed with \(described)")
            }
        }
    }

    /// The closing handshake from our side: sends a Close (unless one was sent), reads until the server's
    /// Close, then waits for the server to close TCP (§7.1.1) and closes the socket. Returns the server's
    /// Close code (nil if its Close had none).
    @discardableResult
    public func close(
        code: WebSocketCloseCode = .normalClosure, reason: String = "",
        timeout: Duration? = nil
    ) throws(WebSocketClientError) -> WebSocketCloseCode? {
        let deadline = Instant.now() + (timeout ?? defaultTimeout)
        if !closeSent { try sendClose(code: code, reason: reason) }
        var peerCode: WebSocketCloseCode?
        while !closeReceived {
            if case .close(let code, _) = try receiveEvent(timeout: deadline.since(.now())) { peerCode = code }
        }
        _ = waitForServerClose(timeout: deadline.since(.now()))
        disconnect()
        return peerCode
    }

    /// Reads and discards until the server closes the TCP connection; false on timeout.
    public func waitForServerClose(timeout: Duration? = nil) -> Bool {
        let deadline = Instant.now() + (timeout ?? defaultTimeout)
        while fd >= 0 {
            var chunk: [UInt8] = []
            do {
                try Self.fill(fd, into: &chunk, deadline: deadline)
            } catch {
                return error.kind == .connectionClosed
            }
        }
        return true
    }

    /// Closes the socket at once (no closing handshake).
    public func disconnect() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    // MARK: Frames

    private func handle(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> Event? {
        switch frame.opcode {
        case .ping:
            if answersPings && !closeSent { try? sendPong(frame.payload) }
            return .ping(frame.payload)
        case .pong:
            return .pong(frame.payload)
        case .close:
            closeReceived = true
            let decoded = try WebSocketClosePayload.decode(frame.payload)
            if !closeSent { try? sendClose(code: decoded.code ?? .normalClosure) }
            return .close(code: decoded.code, reason: decoded.reason)
        case .text, .binary:
            if fragmentOpcode != nil { throw .protocolViolation("new data frame inside a fragmented message") }
            if frame.fin { return try message(opcode: frame.opcode, payload: frame.payload) }
            fragmentOpcode = frame.opcode
            fragments = frame.payload
            validator = UTF8Validator()
            if frame.opcode == .text && !validator.validate(frame.payload) {
                throw .invalidUTF8("invalid UTF-8 in text")
            }
            return nil
        case .continuation:
            guard let opcode = fragmentOpcode else { throw .protocolViolation("continuation without a message") }
            if fragments.count + frame.payload.count > maxMessageBytes { throw .tooBig("message over the limit") }
            if opcode == .text && !validator.validate(frame.payload) { throw .invalidUTF8("invalid UTF-8 in text") }
            fragments.append(contentsOf: frame.payload)
            guard frame.fin else { return nil }
            let payload = fragments
            fragments = []
            fragmentOpcode = nil
            return try message(opcode: opcode, payload: payload)
        }
    }

    private func message(opcode: WebSocketOpcode, payload: [UInt8]) throws(WebSocketProtocolError) -> Event {
        if opcode == .binary { return .binary(payload) }
        guard let text = String(validating: payload, as: UTF8.self) else { throw .invalidUTF8("invalid UTF-8 in text") }
        return .text(text)
    }

    // MARK: Socket

    private static func connect(host: String, port: UInt16, timeout: Duration) throws(WebSocketClientError) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw WebSocketClientError(.io, "socket() failed: errno \(errno)") }
        var sendTimeout = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        let name = host == "localhost" ? "127.0.0.1" : host
        guard inet_pton(AF_INET, name, &addr.sin_addr) == 1 else {
            Glibc.close(fd)
            throw WebSocketClientError(.io, "not an IPv4 address: \(host)")
        }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let code = errno
            Glibc.close(fd)
            throw WebSocketClientError(.io, "connect to \(host):\(port) failed: errno \(code)")
        }
        return fd
    }

    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(WebSocketClientError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw WebSocketClientError(.io, "send failed: errno \(errno)") }
            offset += n
        }
    }

    /// Appends what one read returns, waiting until `deadline`.
    private static func fill(_ fd: Int32, into buffer: inout [UInt8], deadline: Instant) throws(WebSocketClientError) {
        while true {
            let remaining = deadline.since(.now())
            let (seconds, attoseconds) = remaining.components
            let millis = Int32(min(seconds * 1000 + attoseconds / 1_000_000_000_000_000, 600_000))
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, millis)
            if ready < 0 {
                if errno == EINTR { continue }
                throw WebSocketClientError(.io, "poll failed: errno \(errno)")
            }
            if ready == 0 { throw WebSocketClientError(.timeout, "nothing received in time") }
            let chunkSize = 64 * 1024
            var n = 0
            let received = [UInt8](unsafeUninitializedCapacity: chunkSize) { raw, count in
                n = recv(fd, raw.baseAddress, chunkSize, 0)
                count = max(n, 0)
            }
            if n > 0 {
                buffer.append(contentsOf: received)
                return
            }
            if n == 0 { throw WebSocketClientError(.connectionClosed, "the server closed the connection") }
            if errno == EINTR || errno == EAGAIN { continue }
            if errno == ECONNRESET { throw WebSocketClientError(.connectionClosed, "the connection was reset") }
            throw WebSocketClientError(.io, "recv failed: errno \(errno)")
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }
}

// Blocking and used from one thread at a time (tests hand it to a dedicated thread), like RawHTTPClient.
extension WebSocketClient: @unchecked Sendable {}

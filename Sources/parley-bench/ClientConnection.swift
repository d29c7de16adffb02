import CParleyLinux
import Glibc
import ParleyNet
import ParleyWebSocket

/// How a connection ended.
enum ConnectionEnding {
    /// We sent Close and the server answered (or we gave up waiting at the end of the run).
    case closedByUs
    /// The server sent a Close first.
    case serverClosed(code: UInt16?, reason: String)
    /// Connect, handshake, I/O or protocol failure.
    case failed(String)

    var summary: String {
        switch self {
        case .closedByUs: return "closed by the benchmark"
        case .serverClosed(let code, let reason):
            return "server closed with \(code.map(String.init) ?? "no code") \(reason)"
        case .failed(let reason): return reason
        }
    }
}

/// What a connection reports to the code that owns it, on the connection's loop.
protocol ClientConnectionDelegate: AnyObject {
    /// The loop's read buffer, shared by its connections (they read one at a time).
    var readBuffer: UnsafeMutableRawBufferPointer { get }
    func connectionOpened(_ connection: ClientConnection)
    /// A complete text frame.
    func connection(_ connection: ClientConnection, receivedText payload: [UInt8])
    func connectionEnded(_ connection: ClientConnection, _ ending: ConnectionEnding)
}

/// One WebSocket client connection driven by an epoll loop: connect -> send the handshake -> read the 101 ->
/// frames. Non-blocking throughout, so one thread holds thousands of them.
///
/// Kept small because idle mode opens 10,000 per process: an open connection holds its descriptor, a frame
/// parser (whose buffer is freed whenever it drains), an output array that is empty unless the socket pushed
/// back, and a few counters. The handshake's key and partial answer live in a side object freed at the 101.
/// The pure protocol parts are ParleyWebSocket's (`WebSocketClientHandshake`, `WebSocketFrameParser` in the
/// client role, `WebSocketFrameEncoder.client`, which masks every frame with a fresh key).
///
/// Loop-confined: every method runs on `loop`'s thread.
final class ClientConnection: IOHandler {
    enum State: UInt8 {
        case idle, connecting, handshaking, open
        /// We sent Close; waiting for the server's Close.
        case closing
        /// Both Closes exchanged; waiting for the server to close TCP (RFC 6455 §7.1.1: the server closes first).
        case closeExchanged
        case closed
    }

    /// The handshake in progress: freed once the 101 is read.
    private final class PendingHandshake {
        let handshake = WebSocketClientHandshake()
        /// The request until it is sent, then the answer read so far.
        var bytes: [UInt8] = []
    }

    /// Index in the run (which user, which role).
    let index: Int32
    unowned let loop: EventLoop
    unowned let delegate: any ClientConnectionDelegate
    private(set) var state = State.idle
    private var fd: Int32 = -1
    private var watchingWritable = false
    private var pending: PendingHandshake?
    private var parser = WebSocketFrameParser(role: .client, maxFramePayloadBytes: 1 << 20)
    private var output: [UInt8] = []
    /// Server pings answered (the heartbeat check of idle mode).
    private(set) var pingsReceived: UInt32 = 0
    /// Our `message` frames received (the cluster mode checks each recipient's count).
    var messagesReceived: UInt32 = 0
    /// Set by the owner when the `hello` frame arrived.
    var helloReceived = false
    /// The sending side of the load, for the few connections that send.
    var sender: Sender?

    init(index: Int32, loop: EventLoop, delegate: any ClientConnectionDelegate) {
        self.index = index
        self.loop = loop
        self.delegate = delegate
    }

    // MARK: Opening

    /// Starts connecting; the handshake (with `headers`, e.g. `Authorization`) follows when TCP is up.
    func connect(to address: IPv4Address, host: String, headers: [(String, String)]) {
        let pending = PendingHandshake()
        self.pending = pending
        pending.bytes = pending.handshake.request(host: host, path: "/ws", extraHeaders: headers)
        let socketFD = socket(
            AF_INET,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socketFD >= 0 else { return fail("socket: \(String(cString: strerror(errno)))") }
        fd = socketFD
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = address
        let rc = address.withSockaddr { Glibc.connect(socketFD, $0, $1) }
        if rc != 0 && errno != EINPROGRESS { return fail("connect: \(String(cString: strerror(errno)))") }
        state = .connecting
        do {
            try loop.register(fd: fd, events: .writable, handler: self)
            watchingWritable = true
        } catch {
            fail("epoll: \(error)")
        }
    }

    private func connected() {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { return fail("connect: \(String(cString: strerror(error)))") }
        state = .handshaking
        let request = pending?.bytes ?? []
        pending?.bytes = []
        write(request)
        if output.isEmpty { setWritable(false) }
    }

    private func handshakeBytes(_ bytes: UnsafeRawBufferPointer) {
        guard let pending else { return fail("handshake state missing") }
        pending.bytes.append(contentsOf: bytes)
        guard let end = ByteSearch.firstIndex(of: ByteSearch.headEnd, in: pending.bytes) else {
            if pending.bytes.count > 16 * 1024 { fail("handshake answer head over 16 KiB") }
            return
        }
        guard let response = WebSocketClientHandshake.parseResponseHead(pending.bytes[..<end]) else {
            return fail("malformed handshake answer")
        }
        if response.status != 101 {
            let body = String(decoding: pending.bytes[(end + 4)...].prefix(200), as: UTF8.self)
            return fail("handshake answered \(response.status): \(body)")
        }
        do {
            try pending.handshake.validate(response)
        } catch {
            return fail("handshake: \(error.message)")
        }
        let rest = pending.bytes[(end + 4)...]
        self.pending = nil
        state = .open
        delegate.connectionOpened(self)
        if !rest.isEmpty {
            parser.append(contentsOf: rest)
            readFrames()
        }
    }

    // MARK: Sending

    /// Sends a text frame (masked with a fresh key).
    func send(text payload: [UInt8]) {
        guard state == .open else { return }
        write(WebSocketFrameEncoder.client.encode(opcode: .text, payload: payload))
    }

    /// Starts the closing handshake (or drops a connection that is not open yet).
    func close() {
        switch state {
        case .open:
            write(WebSocketFrameEncoder.client.encodeClose(code: .normalClosure))
            state = .closing
        case .idle, .connecting, .handshaking:
            finish(.closedByUs)
        case .closing, .closeExchanged, .closed:
            break
        }
    }

    /// Closes the socket now, whatever the state.
    func abort() {
        if state != .closed { finish(.closedByUs) }
    }

    private func write(_ bytes: [UInt8]) {
        guard fd >= 0, !bytes.isEmpty else { return }
        if !output.isEmpty {
            output.append(contentsOf: bytes)
            return
        }
        guard let written = bytes.withUnsafeBytes({ sendNow($0) }) else { return }
        if written < bytes.count {
            output.append(contentsOf: bytes[written...])
            setWritable(true)
        }
    }

    private func flush() {
        guard let written = output.withUnsafeBytes({ sendNow($0) }) else { return }
        if written == output.count {
            output = []
            setWritable(false)
        } else {
            output.removeSubrange(0..<written)
        }
    }

    /// Writes what the socket takes now; nil after a fatal error (the connection has then failed).
    private func sendNow(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var written = 0
        while written < bytes.count {
            let n = Glibc.send(fd, bytes.baseAddress! + written, bytes.count - written, Int32(MSG_NOSIGNAL))
            if n > 0 {
                written += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                break
            } else {
                fail("send: \(String(cString: strerror(errno)))")
                return nil
            }
        }
        return written
    }

    private func setWritable(_ on: Bool) {
        guard on != watchingWritable, fd >= 0 else { return }
        watchingWritable = on
        loop.modify(fd: fd, events: on ? [.readable, .writable] : .readable)
    }

    // MARK: Receiving

    func ioReady(readable: Bool, writable: Bool, hangup: Bool) {
        if state == .connecting {
            if writable || hangup { connected() }
            return
        }
        if writable && fd >= 0 && !output.isEmpty { flush() }
        if (readable || hangup) && fd >= 0 { readAvailable() }
    }

    /// Reads until the socket is drained, at most 16 buffers per wake-up (epoll is level-triggered: a busy
    /// connection is called again and cannot starve the others).
    private func readAvailable() {
        let buffer = delegate.readBuffer
        var reads = 0
        while fd >= 0 && reads < 16 {
            reads += 1
            let n = read(fd, buffer.baseAddress!, buffer.count)
            if n > 0 {
                received(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                if n < buffer.count { return }
            } else if n == 0 {
                return state == .closing || state == .closeExchanged
                    ? finish(.closedByUs) : fail("the server closed TCP without a Close frame")
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return
            } else {
                return fail("read: \(String(cString: strerror(errno)))")
            }
        }
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        switch state {
        case .handshaking:
            handshakeBytes(bytes)
        case .open, .closing:
            parser.append(bytes)
            readFrames()
        case .closeExchanged, .idle, .connecting, .closed:
            break
        }
    }

    private func readFrames() {
        while state == .open || state == .closing {
            let frame: WebSocketFrame?
            do {
                frame = try parser.next()
            } catch {
                return fail("protocol error from the server: \(error)")
            }
            guard let frame else { return }
            switch frame.opcode {
            case .text where frame.fin:
                if state == .open { delegate.connection(self, receivedText: frame.payload) }
            case .ping:
                pingsReceived &+= 1
                if state == .open { write(WebSocketFrameEncoder.client.encode(opcode: .pong, payload: frame.payload)) }
            case .pong:
                break
            case .close:
                let decoded = try? WebSocketClosePayload.decode(frame.payload)
                if state == .open {
                    write(WebSocketFrameEncoder.client.encodeClose(code: decoded?.code ?? .normalClosure))
                    return finish(.serverClosed(code: decoded?.code?.rawValue, reason: decoded?.reason ?? ""))
                }
                state = .closeExchanged
            default:
                // Parley never fragments its frames nor sends binary ones to the gateway's clients.
                return fail("unexpected \(frame)")
            }
        }
    }

    // MARK: Ending

    private func fail(_ reason: String) {
        finish(.failed(reason))
    }

    private func finish(_ ending: ConnectionEnding) {
        guard state != .closed else { return }
        if fd >= 0 {
            if state != .idle { loop.unregister(fd: fd) }
            Glibc.close(fd)
            fd = -1
        }
        state = .closed
        pending = nil
        output = []
        parser = WebSocketFrameParser(role: .client, maxFramePayloadBytes: 1 << 20)
        delegate.connectionEnded(self, ending)
    }
}

import Foundation
import Glibc
import ParleyJSON
import ParleyNet
import ParleyWebSocket
import Synchronization

/// One WebSocket to `GET /ws`, speaking the JSON protocol of docs/protocol.md: requests with a `reqId` answered by
/// exactly one `ack` or `error`, and server events in between.
///
/// The socket belongs to one thread, because `WebSocketClient` is blocking and not thread-safe. That thread waits
/// in `poll` on the socket and on a wake-up pipe, reads every frame as it arrives, answers pings, and sends what
/// other threads queued. Other tasks reach it only through `state` (a mutex: frames to send, requests awaiting
/// their answer) and the pipe: the same shape as the server's event loops (`execute` = an inbox and an eventfd).
///
/// ```swift
/// let connection = try await IMConnection.open(server: server, token: session.imToken)
/// let stored = try await connection.request("send", ["toId": "u_bob", "chatType": "single", "msgType": "text",
///                                                    "content": "hi", "clientMsgId": "c-1"])
/// for await event in connection.events { ... }   // .event("message", ...), ..., .closed(reason)
/// ```
public final class IMConnection: Sendable {
    public let hello: IMHello
    /// Server events in arrival order; finishes after `.closed`.
    public let events: AsyncStream<IMEvent>
    private let sink: AsyncStream<IMEvent>.Continuation
    private let state = Mutex(State())
    private let wakeRead: Int32
    private let wakeWrite: Int32

    private struct Pending {
        var continuation: CheckedContinuation<Result<JSONValue, ParleyAPIError>, Never>
        var deadline: Instant
    }

    private struct State {
        var outbox: [String] = []
        var pending: [String: Pending] = [:]
        var nextRequest = 1
        var closeRequested = false
        var ended = false
    }

    private init(hello: IMHello, wakeRead: Int32, wakeWrite: Int32) {
        self.hello = hello
        self.wakeRead = wakeRead
        self.wakeWrite = wakeWrite
        (events, sink) = AsyncStream.makeStream(of: IMEvent.self)
    }

    deinit {
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    /// Connects with the IM token in `Authorization`, waits for `hello`, and starts the connection's thread.
    public static func open(
        server: ServerAddress, token: String,
        timeout: Duration = .seconds(10)
    ) async throws(IMConnectionError) -> IMConnection {
        let result = await withCheckedContinuation {
            (opened: CheckedContinuation<Result<IMConnection, IMConnectionError>, Never>) in
            let thread = Thread {
                let socket: WebSocketClient
                let connection: IMConnection
                do throws(IMConnectionError) {
                    (socket, connection) = try handshake(server: server, token: token, timeout: timeout)
                } catch {
                    opened.resume(returning: .failure(error))
                    return
                }
                opened.resume(returning: .success(connection))
                connection.run(socket) // this thread owns the socket until the connection ends
            }
            thread.name = "parley-chat-ws"
            thread.start()
        }
        return try result.get()
    }

    /// Blocking: TCP, the upgrade, the `hello`.
    private static func handshake(
        server: ServerAddress, token: String,
        timeout: Duration
    ) throws(IMConnectionError) -> (WebSocketClient, IMConnection) {
        let address = try server.resolveIPv4()
        let socket: WebSocketClient
        let helloText: String
        do {
            socket = try WebSocketClient(
                host: address, port: server.port, path: "/ws",
                headers: [("Authorization", "Bearer \(token)")], timeout: timeout)
            guard case .text(let text) = try socket.receiveMessage(timeout: timeout) else {
                throw IMConnectionError.protocolViolation("a binary frame instead of hello")
            }
            helloText = text
        } catch let error as IMConnectionError {
            throw error
        } catch let error as WebSocketClientError {
            if case .handshakeRejected(let status) = error.kind {
                let envelope = try? JSONValue.parse(error.body)
                throw .rejected(
                    status: status, code: Int(envelope?["code"]?.int64Value ?? -1),
                    message: envelope?["message"]?.stringValue ?? "HTTP \(status)")
            }
            throw .unreachable("\(server): \(error.message)")
        } catch {
            throw .unreachable("\(server): \(error)")
        }
        guard let frame = try? JSONValue.parse(helloText), frame["type"]?.stringValue == "hello" else {
            socket.disconnect()
            throw .protocolViolation("the first frame was not hello: \(helloText.prefix(200))")
        }
        let hello = try IMHello(json: frame["data"] ?? .null)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            socket.disconnect()
            throw .unreachable("pipe failed: errno \(errno)")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return (socket, IMConnection(hello: hello, wakeRead: fds[0], wakeWrite: fds[1]))
    }

    // MARK: Requests (any thread)

    /// Sends `{"type": type, "reqId": ..., "data": data}` and waits for its `ack` (returns its `data`) or `error`
    /// (throws `.server` with the code). Throws `.transport` when the connection ends first or no answer comes in
    /// `timeout`: the request may still have been carried out, so repeat sends with the same `clientMsgId`.
    public func request(
        _ type: String, _ data: JSONValue = [:],
        timeout: Duration = .seconds(15)
    ) async throws(ParleyAPIError) -> JSONValue {
        let result = await withCheckedContinuation { continuation in
            let queued = state.withLock { state in
                guard !state.ended && !state.closeRequested else { return false }
                let reqId = "r\(state.nextRequest)"
                state.nextRequest += 1
                let frame: JSONValue = ["type": .string(type), "reqId": .string(reqId), "data": data]
                state.pending[reqId] = Pending(continuation: continuation, deadline: .now() + timeout)
                state.outbox.append(frame.serializedString)
                return true
            }
            if queued {
                wake()
            } else {
                continuation.resume(returning: .failure(.transport("not connected")))
            }
        }
        return try result.get()
    }

    /// Starts the closing handshake; `events` ends with `.closed(.byClient)`.
    public func close() {
        state.withLock { $0.closeRequested = true }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1) // a full pipe already means "wake up"
    }

    // MARK: The connection's thread

    private func run(_ socket: WebSocketClient) {
        let reason = serve(socket)
        let abandoned = state.withLock { state in
            state.ended = true
            state.outbox = []
            defer { state.pending = [:] }
            return Array(state.pending.values)
        }
        for request in abandoned {
            request.continuation.resume(returning: .failure(.transport("the connection closed before the answer")))
        }
        socket.disconnect()
        sink.yield(.closed(reason))
        sink.finish()
    }

    /// Sends what is queued, then waits for the socket, the pipe or the nearest request deadline; returns why the
    /// connection ended.
    private func serve(_ socket: WebSocketClient) -> IMCloseReason {
        while true {
            let now = Instant.now()
            let (outgoing, closing, expired, nextDeadline) = state.withLock { state in
                defer { state.outbox = [] }
                let expired = state.pending.filter { $0.value.deadline <= now }
                for reqId in expired.keys { state.pending[reqId] = nil }
                return (
                    state.outbox, state.closeRequested, Array(expired.values),
                    state.pending.values.map(\.deadline).min()
                )
            }
            for request in expired {
                request.continuation.resume(returning: .failure(.transport("no answer in time")))
            }
            do {
                for text in outgoing { try socket.send(text: text) }
            } catch {
                return .lost("send failed: \(error.message)")
            }
            if closing {
                _ = try? socket.close(code: .normalClosure, timeout: .seconds(2))
                return .byClient
            }

            let waitMilliseconds =
                nextDeadline.map { Int32(min(1000, $0.since(now).nanosecondsClamped / 1_000_000)) } ?? 1000
            var fds = [
                pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, waitMilliseconds)
            if ready < 0 && errno != EINTR { return .lost("poll failed: errno \(errno)") }
            if fds[1].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &drain, drain.count) > 0 {}
            }
            if fds[0].revents != 0 {
                // Everything that arrived, frame by frame; a zero timeout stops at the first incomplete frame.
                do {
                    while true {
                        if let end = handle(try socket.receiveEvent(timeout: .zero), socket) { return end }
                    }
                } catch {
                    switch error.kind {
                    case .timeout: continue
                    case .connectionClosed: return .lost("the server closed the connection")
                    default: return .lost(error.message)
                    }
                }
            }
        }
    }

    /// One frame: an answer resumes its request, an event goes to `events`, a Close ends the connection.
    private func handle(_ event: WebSocketClient.Event, _ socket: WebSocketClient) -> IMCloseReason? {
        switch event {
        case .text(let text):
            guard let frame = try? JSONValue.parse(text), let type = frame["type"]?.stringValue else { return nil }
            let data = frame["data"] ?? .null
            if type == "ack" || type == "error", let reqId = frame["reqId"]?.stringValue,
                let request = state.withLock({ $0.pending.removeValue(forKey: reqId) })
            {
                let result: Result<JSONValue, ParleyAPIError> =
                    type == "ack"
                    ? .success(data)
                    : .failure(
                        .server(
                            status: 0, code: Int(data["code"]?.int64Value ?? -1),
                            message: data["message"]?.stringValue ?? "error"))
                request.continuation.resume(returning: result)
            } else {
                sink.yield(.event(type: type, data: data))
            }
            return nil
        case .close(let code, let reason):
            // Our Close went back already; RFC 6455 §7.1.1: the server closes TCP first.
            _ = socket.waitForServerClose(timeout: .seconds(1))
            return .server(code: code?.rawValue, reason: reason)
        case .binary, .ping, .pong:
            return nil
        }
    }
}

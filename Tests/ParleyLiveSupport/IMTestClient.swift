import Foundation
import ParleyTestSupport
import ParleyWebSocket
import Synchronization

/// A device on the gateway for tests (realtime, calls): a real WebSocket client (ours, blocking, on dedicated threads) that
/// speaks the JSON protocol. Frames that arrive while waiting for something else are kept for later `next`.
public final class IMTestClient: @unchecked Sendable {
    private let lock = NSLock()
    private let socket: WebSocketClient
    private var buffered: [[String: Any]] = []
    private var counter = 0
    public private(set) var closeCode: WebSocketCloseCode?
    /// The reason text of the server's close frame, once it closed.
    public private(set) var closeReason: String?
    public let hello: [String: Any]

    /// Connects with the token in `Authorization` (or `?token=` when `tokenInQuery`) and reads the hello.
    /// `answersPings` false: a device that is gone without having closed (it reads, but never answers a ping).
    public static func connect(port: UInt16, token: String, tokenInQuery: Bool = false, answersPings: Bool = true)
        async throws -> IMTestClient
    {
        try await onDedicatedThread {
            let path = tokenInQuery ? "/ws?token=\(token)" : "/ws"
            let headers = tokenInQuery ? [] : [("Authorization", "Bearer \(token)")]
            let socket = try WebSocketClient(port: port, path: path, headers: headers, timeout: .seconds(10))
            socket.answersPings = answersPings
            guard case .text(let text) = try socket.receiveMessage(timeout: .seconds(10)),
                let hello = Self.decode(text), hello["type"] as? String == "hello"
            else {
                throw IMTestFailure("no hello frame")
            }
            return IMTestClient(socket: socket, hello: hello)
        }
    }

    private init(socket: WebSocketClient, hello: [String: Any]) {
        self.socket = socket
        self.hello = hello
    }

    public static func decode(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    /// Sends a request and waits for its `ack` (returned) or `error` (thrown as `IMTestError`).
    @discardableResult
    public func request(_ type: String, _ data: [String: Any] = [:], timeout: Duration = .seconds(10)) async throws
        -> [String:
        Any]
    {
        let reqId = lock.withLock { () -> String in
            counter += 1
            return "r\(counter)"
        }
        try await sendRaw(["type": type, "reqId": reqId, "data": data])
        let answer = try await next(timeout: timeout) { frame in
            (frame["type"] as? String == "ack" || frame["type"] as? String == "error")
                && frame["reqId"] as? String == reqId
        }
        if answer["type"] as? String == "error" {
            let error = answer["data"] as? [String: Any] ?? [:]
            throw IMTestError(code: error["code"] as? Int ?? 0, message: error["message"] as? String ?? "")
        }
        return answer["data"] as? [String: Any] ?? [:]
    }

    public func sendRaw(_ object: [String: Any]) async throws {
        let text = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        try await sendText(text)
    }

    public func sendText(_ text: String) async throws {
        try await onDedicatedThread { [self] in
            try lock.withLock { try socket.send(text: text) }
        }
    }

    /// The first frame (buffered or new) of `type` that satisfies `predicate`.
    public func next(
        _ type: String, timeout: Duration = .seconds(10),
        where predicate: @escaping @Sendable ([String: Any]) -> Bool = { _ in true }
    ) async throws -> [String: Any] {
        try await next(timeout: timeout) { $0["type"] as? String == type && predicate($0) }
    }

    public func next(timeout: Duration, matching: @escaping @Sendable ([String: Any]) -> Bool) async throws -> [String:
        Any]
    {
        let box = try await onDedicatedThread { [self] in
            try lock.withLock { () throws -> FrameBox in
                if let index = buffered.firstIndex(where: matching) { return FrameBox(buffered.remove(at: index)) }
                let deadline = ContinuousClock.now + timeout
                while true {
                    let remaining = deadline - ContinuousClock.now
                    guard remaining > .zero else { throw IMTestFailure("timed out waiting for a frame") }
                    let message: WebSocketClient.Message
                    do {
                        message = try socket.receiveMessage(timeout: remaining)
                    } catch let error as WebSocketClientError {
                        if case .closed(let code, let reason) = error.kind {
                            closeCode = code
                            closeReason = reason
                        }
                        if error.kind == .timeout { throw IMTestFailure("timed out waiting for a frame") }
                        throw error
                    }
                    guard case .text(let text) = message, let frame = Self.decode(text) else { continue }
                    if matching(frame) { return FrameBox(frame) }
                    buffered.append(frame)
                }
            }
        }
        return box.frame
    }

    /// Frames of `type` that arrive within `window` (waits the whole window).
    /// (Stops early when the connection ends.)
    public func collect(_ type: String, for window: Duration) async throws -> [[String: Any]] {
        var found: [[String: Any]] = []
        let deadline = ContinuousClock.now + window
        while ContinuousClock.now < deadline {
            do {
                found.append(try await next(type, timeout: deadline - ContinuousClock.now))
            } catch is IMTestFailure {
                break
            } catch let error as WebSocketClientError where error.kind == .connectionClosed {
                break
            }
        }
        return found
    }

    /// Reads until the server closes; returns its close code.
    public func waitForClose(timeout: Duration = .seconds(10)) async throws -> WebSocketCloseCode? {
        try await onDedicatedThread { [self] in
            try lock.withLock {
                let deadline = ContinuousClock.now + timeout
                while ContinuousClock.now < deadline {
                    do {
                        let message = try socket.receiveMessage(timeout: deadline - ContinuousClock.now)
                        if case .text(let text) = message, let frame = Self.decode(text) { buffered.append(frame) }
                    } catch let error as WebSocketClientError {
                        if case .closed(let code, let reason) = error.kind {
                            closeCode = code
                            closeReason = reason
                            return code
                        }
                        throw error
                    }
                }
                throw IMTestFailure("the server did not close")
            }
        }
    }

    public func close() {
        lock.withLock { try? socket.close(timeout: .seconds(2)) }
    }

    /// Stops the socket without a closing handshake.
    public func drop() {
        lock.withLock { socket.disconnect() }
    }
}

/// Carries a decoded frame out of the reading thread (only one side touches it at a time).
public struct FrameBox: @unchecked Sendable {
    public let frame: [String: Any]
    public init(_ frame: [String: Any]) { self.frame = frame }
}

public struct IMTestError: Error, CustomStringConvertible {
    public let code: Int
    public let message: String
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "error frame \(code): \(message)" }
}

public struct IMTestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

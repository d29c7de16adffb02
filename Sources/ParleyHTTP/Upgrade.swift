import ParleyNet

/// A protocol that takes over a connection after `101 Switching Protocols` (the WebSocket gateway).
/// All calls happen on the connection's event-loop thread.
public protocol ByteStreamHandler: AnyObject {
    /// The 101 answer has been queued; `initialBytes` followed the upgrade request in the same read.
    func channelActive(_ channel: ByteChannel, initialBytes: [UInt8])
    func channelRead(_ bytes: UnsafeRawBufferPointer)
    /// The outgoing buffer drained after `write` had reported backpressure.
    func channelWritable()
    func channelClosed()
    /// The server is shutting down; close soon (e.g. a WebSocket close 1001).
    func serverShuttingDown()
}

/// Set on a 101 response: makes the handler for the upgraded connection, on its loop thread.
public struct HTTPUpgrade: Sendable {
    public let makeHandler: @Sendable (EventLoop) -> any ByteStreamHandler

    public init(makeHandler: @escaping @Sendable (EventLoop) -> any ByteStreamHandler) {
        self.makeHandler = makeHandler
    }
}

/// The upgraded connection's byte stream, as a protocol handler sees it. Loop-confined.
public final class ByteChannel {
    unowned let connection: HTTPConnection
    public var loop: EventLoop { connection.loop }
    public var remoteAddress: String { connection.remoteAddress }

    init(connection: HTTPConnection) { self.connection = connection }

    /// Queues bytes; returns false when the outgoing buffer is over its high-water mark, after
    /// which the caller should stop producing until `channelWritable()`.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool { connection.channelWrite(bytes) }

    public var bufferedOutputBytes: Int { connection.pendingOutputBytes }
    public var isOpen: Bool { !connection.isClosed }

    /// Closes after flushing what is queued (or at once when `flush` is false).
    public func close(flush: Bool = true) { connection.channelClose(flush: flush) }

    public func pauseReading() { connection.setReadingPaused(true) }
    public func resumeReading() { connection.setReadingPaused(false) }
}

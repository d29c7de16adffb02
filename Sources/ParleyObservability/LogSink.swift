import Dispatch
import Glibc
import ParleyBytes
import ParleyNet
import Synchronization

/// Where log lines go: a file descriptor written in large batches, so that access logging never
/// limits request throughput. Each event loop gathers its lines in its own buffer (the loops never wait for
/// each other's lock on the way; a thread off the loops has a buffer of its own); a buffer is handed over when it
/// passes `flushThreshold`, when the application's flusher calls `flush()` (periodically, and at shutdown), and at
/// once for errors. One serial writer queue does
/// every `write(2)`, so a thread that logs never waits on the disk (a page-cache stall under heavy writeback
/// would otherwise stall an event loop and every request on it); past `maxQueuedBytes` awaiting the writer, the
/// logging thread waits for it instead (memory stays bounded). Lines of one loop or thread keep their order; lines of
/// different ones may be up to one flush apart in the file.
public final class LogSink: Sendable {
    public let level: LogLevel
    let timestampCache = TimestampCache()
    let clock: @Sendable () -> timespec
    private let fd: Int32
    private let ownsFD: Bool
    private let buffers = LoopLocal { LineBuffer() }
    /// Whole chunks reach the descriptor one at a time, in the order they were handed over.
    private let writer = DispatchQueue(label: "parley.log-writer")
    private let queuedBytes = Atomic<Int>(0)
    private let maxQueuedBytes = 8 << 20
    private let flushThreshold: Int
    private let capture: LogCapture?

    public init(fd: Int32 = 1, level: LogLevel = .info, flushThreshold: Int = 64 * 1024, ownsFD: Bool = false) {
        self.fd = fd
        self.ownsFD = ownsFD
        self.level = level
        self.flushThreshold = flushThreshold
        self.capture = nil
        self.clock = {
            var ts = timespec(); clock_gettime(CLOCK_REALTIME, &ts); return ts
        }
    }

    /// A sink that keeps every line in memory, for tests that inspect the log output.
    public init(capturingAt level: LogLevel = .debug) {
        self.fd = -1
        self.ownsFD = false
        self.level = level
        self.flushThreshold = Int.max
        self.capture = LogCapture()
        self.clock = {
            var ts = timespec(); clock_gettime(CLOCK_REALTIME, &ts); return ts
        }
    }

    /// Opens (appending) a log file; falls back to stdout when it cannot be opened.
    public static func file(path: String, level: LogLevel) -> LogSink {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        if fd < 0 { return LogSink(fd: 1, level: level) }
        return LogSink(fd: fd, level: level, ownsFD: true)
    }

    deinit {
        // Every chunk handed to the writer held this sink, so none is pending now; the writer may be the thread
        // releasing it, hence no `writer.sync` here.
        if capture == nil {
            buffers.forEach { buffer in
                let pending = buffer.bytes.withLock { Self.take(&$0) }
                if !pending.isEmpty { writeAll(pending) }
            }
        }
        if ownsFD { close(fd) }
    }

    public var capturedText: String {
        guard let capture else { return "" }
        return capture.lines.withLock { String(decoding: $0, as: UTF8.self) }
    }

    func write(_ line: borrowing ByteBuffer, urgent: Bool) {
        if let capture {
            line.withUnsafeBytes { bytes in capture.lines.withLock { $0.append(contentsOf: bytes) } }
            return
        }
        let toWrite: [UInt8]? = buffers.value.bytes.withLock { buf in
            buf.append(line)
            guard urgent || buf.count >= flushThreshold else { return nil }
            return Self.take(&buf)
        }
        if let toWrite { hand(toWrite, wait: urgent) }
    }

    /// Appends one line built by `build` to this loop's (or thread's) buffer in place (the hot path: no separate line buffer).
    /// The buffer's lock is held while the line is built, so a concurrent `flush()` never sees half a line.
    func appendLine(urgent: Bool, _ build: (inout JSONLine) -> Void) {
        if capture != nil {
            var line = JSONLine()
            build(&line)
            let bytes = line.finishAppending()
            write(bytes, urgent: urgent)
            return
        }
        let toWrite: [UInt8]? = buffers.value.bytes.withLock { buf in
            var line = JSONLine(appendingTo: buf)
            build(&line)
            buf = line.finishAppending()
            guard urgent || buf.count >= flushThreshold else { return nil }
            return Self.take(&buf)
        }
        if let toWrite { hand(toWrite, wait: urgent) }
    }

    /// Hands every buffer's pending lines to the writer; with `wait`, returns once everything handed over is
    /// written (shutdown). The periodic flusher does not wait: it must not hold a cooperative thread on the disk.
    public func flush(wait: Bool = true) {
        guard capture == nil else { return }
        buffers.forEach { buffer in
            let pending = buffer.bytes.withLock { Self.take(&$0) }
            if !pending.isEmpty { hand(pending, wait: false) }
        }
        if wait { writer.sync {} }
    }

    /// Queues a chunk for the writer; waits for it to be written when asked (errors) or when the writer is behind.
    private func hand(_ chunk: [UInt8], wait: Bool) {
        if wait || queuedBytes.load(ordering: .relaxed) + chunk.count > maxQueuedBytes {
            writer.sync { writeAll(chunk) }
            return
        }
        queuedBytes.add(chunk.count, ordering: .relaxed)
        writer.async {
            self.writeAll(chunk)
            self.queuedBytes.subtract(chunk.count, ordering: .relaxed)
        }
    }

    private static func take(_ buffer: inout ByteBuffer) -> [UInt8] {
        let out = buffer.array
        buffer.removeAll(keepCapacityUpTo: 256 * 1024)
        return out
    }

    /// On the writer queue (or in deinit, when nothing else can write).
    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    return // nowhere to report a failing log; drop rather than crash
                }
                offset += n
            }
        }
    }
}

/// One loop's (or thread's) pending lines. Its lock is taken by its owner for each line and by `flush()` from
/// others now and then, so it is almost never contended.
final class LineBuffer: Sendable {
    let bytes = Mutex(ByteBuffer(capacity: 16 * 1024))
}

/// In-memory log output for tests.
final class LogCapture: Sendable {
    let lines = Mutex<[UInt8]>([])
}

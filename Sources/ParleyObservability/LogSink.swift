import Glibc
import ParleyBytes
import Synchronization

/// Where log lines go: a file descriptor written in large batches, so that access logging never
/// limits request throughput. Lines are flushed when the buffer passes `flushThreshold`, by a
/// background flusher every `flushInterval`, at once for errors, and on `flush()` at shutdown.
public final class LogSink: Sendable {
    public let level: LogLevel
    let timestampCache = TimestampCache()
    let clock: @Sendable () -> timespec
    private let fd: Int32
    private let ownsFD: Bool
    private let buffer = Mutex<ByteBuffer>(ByteBuffer(capacity: 96 * 1024))
    private let flushThreshold: Int
    private let capture: LogCapture?

    public init(fd: Int32 = 1, level: LogLevel = .info, flushThreshold: Int = 64 * 1024, ownsFD: Bool = false) {
        self.fd = fd
        self.ownsFD = ownsFD
        self.level = level
        self.flushThreshold = flushThreshold
        self.capture = nil
        self.clock = { var ts = timespec(); clock_gettime(CLOCK_REALTIME, &ts); return ts }
    }

    /// A sink that keeps every line in memory, for tests that inspect the log output.
    public init(capturingAt level: LogLevel = .debug) {
        self.fd = -1
        self.ownsFD = false
        self.level = level
        self.flushThreshold = Int.max
        self.capture = LogCapture()
        self.clock = { var ts = timespec(); clock_gettime(CLOCK_REALTIME, &ts); return ts }
    }

    /// Opens (appending) a log file; falls back to stdout when it cannot be opened.
    public static func file(path: String, level: LogLevel) -> LogSink {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        if fd < 0 { return LogSink(fd: 1, level: level) }
        return LogSink(fd: fd, level: level, ownsFD: true)
    }

    deinit {
        flush()
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
        let toWrite: [UInt8]? = buffer.withLock { buf in
            buf.append(line)
            guard urgent || buf.count >= flushThreshold else { return nil }
            let out = buf.array
            buf.removeAll(keepCapacityUpTo: 256 * 1024)
            return out
        }
        if let toWrite { writeAll(toWrite) }
    }

    public func flush() {
        guard capture == nil else { return }
        let pending = buffer.withLock { buf -> [UInt8] in
            let out = buf.array
            buf.removeAll(keepCapacityUpTo: 256 * 1024)
            return out
        }
        if !pending.isEmpty { writeAll(pending) }
    }

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

/// In-memory log output for tests.
final class LogCapture: Sendable {
    let lines = Mutex<[UInt8]>([])
}

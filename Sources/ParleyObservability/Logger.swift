import Glibc
import ParleyBytes
import ParleyJSON
import ParleyNet
import Synchronization

/// Severity of a log line; lines below the sink's level are dropped before formatting.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug = 0, info, warning, error

    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    var staticName: StaticString {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A value in a structured log line.
public enum LogValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
}

/// A structured logger: one JSON object per line, written through a buffered `LogSink`.
/// Cheap to copy; carries per-request metadata such as the request id.
public struct Logger: Sendable {
    public let sink: LogSink
    public var metadata: [(String, LogValue)]

    public init(sink: LogSink, metadata: [(String, LogValue)] = []) {
        self.sink = sink
        self.metadata = metadata
    }

    public func with(_ key: String, _ value: LogValue) -> Logger {
        var copy = self
        copy.metadata.append((key, value))
        return copy
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= sink.level }

    public func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        guard level >= sink.level else { return }
        var line = JSONLine()
        line.field("ts", timestamp: sink.clock())
        line.field("level", .string(level.name))
        line.field("msg", .string(message))
        for (key, value) in metadata { line.field(key, value) }
        for (key, value) in fields { line.field(key, value) }
        line.close()
        sink.write(line.bytes, urgent: level >= .error)
    }

    /// The hot-path form: the caller appends fields straight into the line (no `LogValue` boxing, no
    /// field list), e.g. the access log, which writes one line per request.
    public func log(_ level: LogLevel, _ message: StaticString, fields: (inout JSONLine) -> Void) {
        guard level >= sink.level else { return }
        let timestamp = sink.clock()
        // Formatted straight into this thread's pending output: no line buffer to allocate and copy.
        sink.appendLine(urgent: level >= .error) { line in
            line.appendTimestamp(timestamp, cache: sink.timestampCache)
            line.rawField("level", level.staticName)
            line.rawField("msg", message)
            for (key, value) in metadata { line.field(key, value) }
            fields(&line)
        }
    }

    public func debug(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        log(.debug, message, fields)
    }
    public func info(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        log(.warning, message, fields)
    }
    public func error(_ message: String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        log(.error, message, fields)
    }
}

/// Builds one JSON object byte by byte; avoids Foundation's encoder on the logging hot path.
public struct JSONLine: ~Copyable {
    fileprivate var bytes: ByteBuffer
    private var first = true

    public init() {
        self.init(appendingTo: ByteBuffer(capacity: 384))
    }

    /// A line appended after what `buffer` holds already; `finishAppending()` gives the buffer back.
    init(appendingTo buffer: consuming ByteBuffer) {
        bytes = buffer
        bytes.append(UInt8(ascii: "{"))
    }

    /// Closes the line and returns the buffer it was appended to.
    consuming func finishAppending() -> ByteBuffer {
        close()
        return bytes
    }

    /// `"ts":"2026-12-01T02:03:04.123Z"` with the part up to the seconds formatted once per second.
    mutating func appendTimestamp(_ timestamp: timespec, cache: TimestampCache) {
        separate()
        cache.appendPrefix(forSecond: timestamp.tv_sec, to: &bytes)
        let millis = Int(timestamp.tv_nsec) / 1_000_000
        bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: millis / 100))
        bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: (millis / 10) % 10))
        bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: millis % 10))
        bytes.append(UInt8(ascii: "Z"))
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func field(_ key: String, _ value: LogValue) {
        key_(key)
        switch value {
        case .string(let s): JSONString.append(s, to: &bytes)
        case .int(let i): bytes.appendDecimal(i)
        case .double(let d): bytes.append(d.isFinite ? String(d) : "null")
        case .bool(let b): bytes.append(b ? "true" as StaticString : "false")
        }
    }

    /// A string field whose key is a literal that needs no escaping.
    public mutating func field(_ key: StaticString, string value: String) {
        rawKey(key)
        JSONString.append(value, to: &bytes)
    }

    public mutating func field(_ key: StaticString, int value: Int) {
        rawKey(key)
        bytes.appendDecimal(value)
    }

    /// A string field whose value never needs escaping (request ids, addresses): copied, not scanned.
    public mutating func field(_ key: StaticString, plain value: String) {
        rawKey(key)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(value)
        bytes.append(UInt8(ascii: "\""))
    }

    /// One or more fields formatted beforehand (`"a":1,"b":"x"`, valid JSON members), copied as they are.
    public mutating func fields(preformatted: [UInt8]) {
        separate()
        bytes.append(preformatted)
    }

    /// A string field whose key and value are both literals that need no escaping.
    mutating func rawField(_ key: StaticString, _ value: StaticString) {
        rawKey(key)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(value)
        bytes.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private mutating func separate() {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
    }

    @inline(__always)
    private mutating func rawKey(_ key: StaticString) {
        bytes.appendMemberName(key, comma: !first)
        first = false
    }

    /// Appends an ISO 8601 UTC timestamp with milliseconds.
    public mutating func field(_ key: String, timestamp: timespec) {
        key_(key)
        var seconds = timestamp.tv_sec
        var tm = tm()
        gmtime_r(&seconds, &tm)
        bytes.append(UInt8(ascii: "\""))
        appendDigits(Int(tm.tm_year) + 1900, width: 4)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(Int(tm.tm_mon) + 1, width: 2)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(Int(tm.tm_mday), width: 2)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(Int(tm.tm_hour), width: 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(Int(tm.tm_min), width: 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(Int(tm.tm_sec), width: 2)
        bytes.append(UInt8(ascii: "."))
        appendDigits(Int(timestamp.tv_nsec) / 1_000_000, width: 3)
        bytes.append("Z\"" as StaticString)
    }

    /// Closes the object and the line.
    mutating func close() {
        bytes.append("}\n" as StaticString)
    }

    /// The finished line's bytes (tests and callers outside a sink).
    public consuming func finish() -> [UInt8] {
        close()
        return bytes.array
    }

    private mutating func key_(_ key: String) {
        separate()
        JSONString.append(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Zero-padded decimal without allocating (timestamps are formatted on every log line).
    private mutating func appendDigits(_ value: Int, width: Int) {
        DecimalASCII.appendPadded(value, width: width, to: &bytes)
    }
}

/// `"ts":"YYYY-MM-DDTHH:MM:SS.` for the current second, so a busy log formats the date once a second
/// instead of once a line (gmtime_r takes glibc's time-zone lock). One per loop (per thread off the loops): no lock
/// on the way.
final class TimestampCache: Sendable {
    private final class Prefix {
        var second = -1
        /// Always 26 bytes: `"ts":"` (6) + `YYYY-MM-DDTHH:MM:SS.` (20).
        var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    }
    private static let length = 26
    private let perLoop = LoopLocal { Prefix() }

    func appendPrefix(forSecond second: Int, to out: inout ByteBuffer) {
        let prefix = perLoop.value
        if prefix.second != second {
            var line = JSONLine()
            line.field("ts", timestamp: timespec(tv_sec: second, tv_nsec: 0))
            let formatted = line.finish()
            // `{"ts":"…:SS.000Z"}\n` -> `"ts":"…:SS.`
            prefix.second = second
            withUnsafeMutableBytes(of: &prefix.bytes) { raw in
                for index in 0..<TimestampCache.length { raw[index] = formatted[1 + index] }
            }
        }
        withUnsafeBytes(of: &prefix.bytes) {
            out.append(UnsafeRawBufferPointer(rebasing: $0[0..<TimestampCache.length]))
        }
    }
}

/// A pure, incremental HTTP/1.1 request parser (RFC 9112): bytes in, ``HTTPParserEvent``s out, no I/O.
///
/// Feed bytes with `append`, then call ``next()`` until it returns nil (more bytes needed). Requests may be
/// pipelined: after `.end` the following bytes start the next request. The first error is final: every
/// later call to `next()` throws it again, and the driver answers with its status and closes.
///
/// Limits are enforced here, as bytes arrive: an oversized head fails with 431 before its end is seen,
/// a body over the limit fails with 413 before it is buffered.
public struct HTTPRequestParser: Sendable {
    enum State: Sendable {
        /// Waiting for a complete request line and header section.
        case head
        /// `.head` was emitted; the next call checks the body limit (which the driver may have changed).
        case bodyStart(HTTPBodyFraming)
        case fixedBody(remaining: Int)
        case chunkLine
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        /// The body is complete; the next call emits `.end`.
        case end
        case failed(HTTPParseError)
    }

    /// Longest chunk-size line (size, extensions) accepted; extensions are ignored but must not grow unbounded.
    static let maxChunkLineBytes = 4 * 1024
    /// A consumed prefix at least this large (and at least half the buffer) is dropped on the next append.
    static let compactionThreshold = 4 * 1024
    /// Largest buffer capacity kept once the buffer is empty; idle connections should not hold big buffers.
    static let retainedCapacity = 4 * 1024

    let limits: HTTPParserLimits
    var buffer: [UInt8] = []
    /// Everything before `readIndex` is consumed.
    var readIndex = 0
    var state: State = .head
    /// Bytes after `readIndex` already scanned for the end of the current line or section, so feeding one
    /// byte at a time stays linear.
    var scanOffset = 0
    /// Start of the line being scanned, relative to `readIndex`.
    var lineStartOffset = 0
    /// Body limit of the current request.
    var bodyLimit: Int
    /// De-chunked bytes announced so far for the current request.
    var chunkedTotal = 0
    /// Size of the current request's head, charged against the trailer section's budget.
    var headByteCount = 0

    public init(limits: HTTPParserLimits = .init()) {
        self.limits = limits
        self.bodyLimit = max(0, limits.maxBodyBytes)
    }

    /// Bytes received but not yet consumed.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds received bytes. Once the parser has failed, further bytes are dropped: nothing will read them.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard prepareForAppend() else { return }
        bytes.withMemoryRebound(to: UInt8.self) { buffer.append(contentsOf: $0) }
    }

    /// Adds received bytes. Once the parser has failed, further bytes are dropped: nothing will read them.
    public mutating func append<C: Collection>(contentsOf bytes: C) where C.Element == UInt8 {
        guard prepareForAppend() else { return }
        buffer.append(contentsOf: bytes)
    }

    /// Applies the route's body limit to the current request. Call it after `.head`, before the next `next()`.
    /// A Content-Length above it fails with 413 at once; a chunked body fails as soon as its announced
    /// de-chunked size exceeds it.
    public mutating func setBodyLimit(_ bytes: Int) {
        bodyLimit = max(0, bytes)
    }

    /// For protocol upgrades: after `.end` of the upgrade request, returns every byte not yet consumed
    /// (the first bytes of the new protocol) and resets the parser.
    public mutating func takeUnconsumedBytes() -> [UInt8] {
        let rest = Array(buffer[readIndex...])
        self = HTTPRequestParser(limits: limits)
        return rest
    }

    /// The next event, or nil when more bytes are needed. After an error the parser stays failed and
    /// keeps throwing it.
    public mutating func next() throws(HTTPParseError) -> HTTPParserEvent? {
        if case .failed(let error) = state { throw error }
        do {
            return try step()
        } catch {
            state = .failed(error)
            throw error
        }
    }

    private mutating func step() throws(HTTPParseError) -> HTTPParserEvent? {
        while true {
            switch state {
            case .head:
                return try parseHead()
            case .bodyStart(let framing):
                switch framing {
                case .none:
                    return finishRequest()
                case .contentLength(let length):
                    // The driver had its chance to raise the limit; refuse before any body byte is read.
                    if length > bodyLimit { throw .bodyTooLarge }
                    if length == 0 { return finishRequest() }
                    state = .fixedBody(remaining: length)
                case .chunked:
                    state = .chunkLine
                }
            case .fixedBody(let remaining):
                guard let bytes = takeBody(upTo: remaining) else { return nil }
                state = remaining == bytes.count ? .end : .fixedBody(remaining: remaining - bytes.count)
                return .body(bytes)
            case .chunkLine:
                guard try parseChunkLine() else { return nil }
            case .chunkData(let remaining):
                guard let bytes = takeBody(upTo: remaining) else { return nil }
                state = remaining == bytes.count ? .chunkDataEnd : .chunkData(remaining: remaining - bytes.count)
                return .body(bytes)
            case .chunkDataEnd:
                guard try consumeChunkDataCRLF() else { return nil }
                state = .chunkLine
            case .trailers:
                guard try parseTrailers() else { return nil }
                return finishRequest()
            case .end:
                return finishRequest()
            case .failed(let error):
                throw error
            }
        }
    }

    /// Consumes and returns up to `limit` buffered bytes, or nil if none are buffered.
    private mutating func takeBody(upTo limit: Int) -> [UInt8]? {
        let count = min(buffer.count - readIndex, limit)
        guard count > 0 else { return nil }
        let bytes = Array(buffer[readIndex..<(readIndex + count)])
        readIndex += count
        return bytes
    }

    /// Ends the current request; the following bytes start the next one (pipelining, RFC 9112 §9.3.2).
    mutating func finishRequest() -> HTTPParserEvent {
        state = .head
        scanOffset = 0
        lineStartOffset = 0
        return .end
    }

    /// Drops the consumed prefix when that is worth a copy; false if the parser has failed.
    private mutating func prepareForAppend() -> Bool {
        if case .failed = state { return false }
        if readIndex == buffer.count {
            guard readIndex > 0 else { return true }
            // Keep a small buffer for the next request; give a large one (after an upload) back.
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
            readIndex = 0
        } else if readIndex >= Self.compactionThreshold && readIndex >= buffer.count / 2 {
            buffer.removeSubrange(..<readIndex)
            readIndex = 0
        }
        return true
    }

    /// The scan window for a field section with `budget` bytes: the final empty line is not charged.
    static func sectionWindow(budget: Int) -> Int {
        min(max(0, budget), Int.max - 2) + 2
    }
}

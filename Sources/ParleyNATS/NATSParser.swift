import Glibc

/// What a server sends a client.
public enum NATSServerOperation: Sendable, Hashable {
    case info(NATSServerInfo)
    case message(NATSMessage)
    case ping
    case pong
    /// `+OK`: only in verbose mode, which this client turns off; harmless if it comes.
    case ok
    case error(NATSServerError)
}

/// A pure, incremental parser of the server side of the NATS client protocol: bytes in, operations out, no I/O.
///
/// Feed bytes with `append`, then call ``next()`` until it returns nil (more bytes needed). Operation names are
/// matched case-insensitively and arguments may be separated by any run of spaces or tabs, as the protocol
/// allows; a control line may end in CRLF or a bare LF. Limits are enforced here, before anything is buffered
/// beyond them: a control line longer than `maxControlLineBytes` (INFO, whose JSON lists the cluster's URLs, has
/// `maxInfoBytes`), and a message larger than `maxPayloadBytes`, which follows the `max_payload` of the latest
/// INFO (capped by `maxPayloadCeiling`, so a server cannot make the client buffer without bound). After any
/// error the parser stays failed: nothing after a framing error can be trusted.
public struct NATSParser: Sendable {
    /// A consumed prefix at least this large (and at least half the buffer) is dropped on the next append.
    static let compactionThreshold = 16 * 1024
    /// An emptied buffer keeps up to this much capacity (a 1 MB message does not pin 1 MB per idle client).
    static let retainedCapacity = 256 * 1024

    public let maxControlLineBytes: Int
    public let maxInfoBytes: Int
    public let maxPayloadCeiling: Int
    public private(set) var maxPayloadBytes: Int

    private var buffer: [UInt8] = []
    /// Everything before `readIndex` is consumed.
    private var readIndex = 0
    /// Where the search for the current control line's LF resumes (bytes before it hold none).
    private var scanIndex = 0
    /// A MSG or HMSG whose control line is read, waiting for its payload.
    private var awaiting: AwaitingPayload?
    private var failure: NATSProtocolError?

    private struct AwaitingPayload: Sendable {
        var subject: String
        var subscription: NATSSubscriptionID
        var replyTo: String?
        /// Nil for MSG.
        var headerBytes: Int?
        var totalBytes: Int
    }

    public init(
        maxControlLineBytes: Int = 4096, maxInfoBytes: Int = 64 * 1024, maxPayloadBytes: Int = 1 << 20,
        maxPayloadCeiling: Int = 64 << 20
    ) {
        self.maxControlLineBytes = max(16, maxControlLineBytes)
        self.maxInfoBytes = max(self.maxControlLineBytes, maxInfoBytes)
        self.maxPayloadCeiling = max(0, maxPayloadCeiling)
        self.maxPayloadBytes = min(max(0, maxPayloadBytes), self.maxPayloadCeiling)
    }

    /// Bytes received but not yet consumed.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    // MARK: Input

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, !bytes.isEmpty else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append<C: Collection>(contentsOf bytes: C) where C.Element == UInt8 {
        guard failure == nil, !bytes.isEmpty else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    private mutating func compact() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
            readIndex = 0
            scanIndex = 0
        } else if readIndex >= Self.compactionThreshold && readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
            scanIndex -= readIndex
            readIndex = 0
        }
    }

    // MARK: Output

    /// The next complete operation, or nil when more bytes are needed.
    public mutating func next() throws(NATSProtocolError) -> NATSServerOperation? {
        if let failure { throw failure }
        do throws(NATSProtocolError) {
            while true {
                if let awaiting {
                    return try payload(for: awaiting)
                }
                guard let line = try controlLine() else { return nil }
                if let operation = try operation(line) { return operation }
            }
        } catch {
            failure = error
            buffer = []
            readIndex = 0
            scanIndex = 0
            throw error
        }
    }

    /// The next control line without its line ending, or nil when its LF has not arrived.
    private mutating func controlLine() throws(NATSProtocolError) -> Range<Int>? {
        let start = max(scanIndex, readIndex)
        let newline: Int? = buffer.withUnsafeBufferPointer { bytes in
            guard start < bytes.count, let base = bytes.baseAddress else { return nil }
            guard let found = memchr(base + start, 0x0A, bytes.count - start) else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        guard let newline else {
            scanIndex = buffer.count
            if buffer.count - readIndex > lineLimit() { throw .controlLineTooLong(limit: lineLimit()) }
            return nil
        }
        var end = newline
        if end > readIndex && buffer[end - 1] == 0x0D { end -= 1 }
        if end - readIndex > lineLimit() { throw .controlLineTooLong(limit: lineLimit()) }
        let line = readIndex..<end
        readIndex = newline + 1
        scanIndex = readIndex
        return line
    }

    /// The limit of the line being read: INFO may be longer than the others.
    private func lineLimit() -> Int {
        guard buffer.count - readIndex >= 4 else { return maxControlLineBytes }
        let isInfo =
            buffer[readIndex] | 0x20 == UInt8(ascii: "i") && buffer[readIndex + 1] | 0x20 == UInt8(ascii: "n")
            && buffer[readIndex + 2] | 0x20 == UInt8(ascii: "f") && buffer[readIndex + 3] | 0x20 == UInt8(ascii: "o")
        return isInfo ? maxInfoBytes : maxControlLineBytes
    }

    /// The operation of a control line; nil for MSG and HMSG, whose payload is read next.
    private mutating func operation(_ line: Range<Int>) throws(NATSProtocolError) -> NATSServerOperation? {
        var nameEnd = line.lowerBound
        while nameEnd < line.upperBound && !Self.isBlank(buffer[nameEnd]) { nameEnd += 1 }
        let name = line.lowerBound..<nameEnd
        let rest = nameEnd..<line.upperBound
        switch name.count {
        case 3 where matches(name, "msg"):
            awaiting = try messageArguments(rest, headers: false)
            return nil
        case 4 where matches(name, "hmsg"):
            awaiting = try messageArguments(rest, headers: true)
            return nil
        case 4 where matches(name, "ping"):
            return .ping
        case 4 where matches(name, "pong"):
            return .pong
        case 3 where matches(name, "+ok"):
            return .ok
        case 4 where matches(name, "-err"):
            return .error(NATSServerError(message: errorText(rest)))
        case 4 where matches(name, "info"):
            let json = trimmed(rest)
            if json.isEmpty { throw .invalidInfo("no JSON") }
            let info = try NATSServerInfo.decode(buffer[json])
            if let limit = info.maxPayload, limit > 0 { maxPayloadBytes = min(limit, maxPayloadCeiling) }
            return .info(info)
        default:
            let shown = buffer[name.prefix(16)].map { $0 >= 0x21 && $0 < 0x7F ? Character(Unicode.Scalar($0)) : "?" }
            throw .unknownOperation(String(shown))
        }
    }

    /// `MSG subject sid [reply] size` / `HMSG subject sid [reply] header-size total-size`.
    private func messageArguments(_ range: Range<Int>, headers: Bool) throws(NATSProtocolError) -> AwaitingPayload {
        let operation = headers ? "HMSG" : "MSG"
        let arguments = split(range)
        let sizes = headers ? 2 : 1
        guard arguments.count == 2 + sizes || arguments.count == 3 + sizes else {
            throw .malformed(operation: operation, reason: "\(arguments.count) arguments")
        }
        guard let sid = decimal(arguments[1]) else {
            throw .malformed(operation: operation, reason: "the subscription id is not a number")
        }
        guard let total = decimal(arguments[arguments.count - 1]) else {
            throw .malformed(operation: operation, reason: "the size is not a number")
        }
        if total > UInt64(maxPayloadBytes) {
            throw .payloadTooLarge(size: total > UInt64(Int.max) ? Int.max : Int(total), limit: maxPayloadBytes)
        }
        var headerBytes: Int?
        if headers {
            guard let size = decimal(arguments[arguments.count - 2]), size <= total else {
                throw .malformed(operation: operation, reason: "the header size is not a number up to the total")
            }
            headerBytes = Int(size)
        }
        let hasReply = arguments.count == 3 + sizes
        return AwaitingPayload(
            subject: text(arguments[0]), subscription: NATSSubscriptionID(sid),
            replyTo: hasReply ? text(arguments[2]) : nil, headerBytes: headerBytes, totalBytes: Int(total))
    }

    private mutating func payload(for message: AwaitingPayload) throws(NATSProtocolError) -> NATSServerOperation? {
        let needed = message.totalBytes + 2
        guard buffer.count - readIndex >= needed else { return nil }
        let end = readIndex + message.totalBytes
        guard buffer[end] == 0x0D && buffer[end + 1] == 0x0A else { throw .missingPayloadTerminator }
        var headers: NATSHeaders?
        var payloadStart = readIndex
        if let headerBytes = message.headerBytes {
            headers = try Self.parseHeaders(buffer[readIndex..<(readIndex + headerBytes)])
            payloadStart += headerBytes
        }
        let payload = Array(buffer[payloadStart..<end])
        readIndex = end + 2
        scanIndex = readIndex
        awaiting = nil
        return .message(
            NATSMessage(
                subject: message.subject, subscription: message.subscription, replyTo: message.replyTo,
                headers: headers, payload: payload))
    }

    // MARK: Headers

    /// `NATS/1.0[ status[ description]]\r\n` then `Name: value\r\n` lines, then an empty line.
    static func parseHeaders(_ block: ArraySlice<UInt8>) throws(NATSProtocolError) -> NATSHeaders {
        var lines: [ArraySlice<UInt8>] = []
        var start = block.startIndex
        var index = block.startIndex
        while index < block.endIndex {
            if block[index] == 0x0A {
                guard index > start, block[index - 1] == 0x0D else { throw .malformedHeaders("a line without CRLF") }
                lines.append(block[start..<(index - 1)])
                start = index + 1
            }
            index += 1
        }
        guard start == block.endIndex, lines.count >= 2, lines.last?.isEmpty == true else {
            throw .malformedHeaders("the block does not end with an empty line")
        }
        let version = Array("NATS/1.0".utf8)
        let first = lines[0]
        guard first.starts(with: version) else { throw .malformedHeaders("no NATS/1.0 version line") }
        var headers = NATSHeaders()
        let statusPart = first.dropFirst(version.count)
        if !statusPart.isEmpty {
            guard isBlank(statusPart.first!) else { throw .malformedHeaders("no NATS/1.0 version line") }
            let words = statusPart.drop(while: isBlank)
            let code = words.prefix(while: { !isBlank($0) })
            guard code.count == 3, code.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw .malformedHeaders("the status is not three digits")
            }
            headers.status = Int(String(decoding: code, as: UTF8.self))
            let description = words.dropFirst(3).drop(while: isBlank)
            if !description.isEmpty { headers.statusDescription = String(decoding: description, as: UTF8.self) }
        }
        for line in lines[1..<(lines.count - 1)] {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
                throw .malformedHeaders("a field without a name")
            }
            let name = line[..<colon]
            guard name.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw .malformedHeaders("a field name with a space or control character")
            }
            var value = line[(colon + 1)...].drop(while: isBlank)
            while let last = value.last, isBlank(last) { value = value.dropLast() }
            headers.fields.append(
                NATSHeaders.Field(
                    name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
        }
        return headers
    }

    // MARK: Helpers

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    private func matches(_ range: Range<Int>, _ lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        for (offset, byte) in expected.enumerated() {
            let actual = buffer[range.lowerBound + offset]
            // Letters compare without case; `+` and `-` must match exactly.
            let folded = actual >= UInt8(ascii: "A") && actual <= UInt8(ascii: "Z") ? actual | 0x20 : actual
            if folded != byte { return false }
        }
        return true
    }

    private func trimmed(_ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper && Self.isBlank(buffer[lower]) { lower += 1 }
        while upper > lower && Self.isBlank(buffer[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    private func split(_ range: Range<Int>) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var index = range.lowerBound
        while index < range.upperBound {
            while index < range.upperBound && Self.isBlank(buffer[index]) { index += 1 }
            let start = index
            while index < range.upperBound && !Self.isBlank(buffer[index]) { index += 1 }
            if index > start { result.append(start..<index) }
        }
        return result
    }

    /// A decimal of at most 19 digits (no sign, no overflow).
    private func decimal(_ range: Range<Int>) -> UInt64? {
        guard !range.isEmpty, range.count <= 19 else { return nil }
        var value: UInt64 = 0
        for index in range {
            let digit = buffer[index] &- 0x30
            guard digit <= 9 else { return nil }
            value = value * 10 + UInt64(digit)
        }
        return value
    }

    private func text(_ range: Range<Int>) -> String { String(decoding: buffer[range], as: UTF8.self) }

    /// `-ERR 'text'`: the text without its quotes.
    private func errorText(_ range: Range<Int>) -> String {
        var inner = trimmed(range)
        if inner.count >= 2 && buffer[inner.lowerBound] == UInt8(ascii: "'")
            && buffer[inner.upperBound - 1] == UInt8(ascii: "'")
        {
            inner = (inner.lowerBound + 1)..<(inner.upperBound - 1)
        }
        return text(inner)
    }
}

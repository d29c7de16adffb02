/// A pure, incremental WebSocket frame parser (RFC 6455 §5.2): bytes in, ``WebSocketFrame``s out, no I/O.
///
/// Feed bytes with `append`, then call ``next()`` until it returns nil (more bytes needed). Frame-level rules
/// are enforced here, as soon as the header is complete and before any payload is buffered:
/// - client frames must be masked, server frames must not be (§5.1) -> 1002;
/// - RSV1-3 must be zero unless an extension allows them (§5.2) -> 1002;
/// - unknown opcodes (3-7, 11-15) -> 1002;
/// - control frames must be final and carry at most 125 bytes (§5.5) -> 1002;
/// - a 64-bit length must have its most significant bit clear (§5.2) -> 1002;
/// - a payload over `maxFramePayloadBytes` -> 1009, refused from its header alone.
///
/// Lengths in a longer encoding than needed (e.g. 5 in the 16-bit form) are accepted: §5.2 says the minimal
/// encoding MUST be used by the sender but does not ask receivers to reject others, and rejecting them
/// buys nothing (the length is still exact).
///
/// After a rule violation the offending frame's payload is skipped, so the caller can keep reading frames
/// while it waits for the peer's Close (§7.1.7). After a framing error (a 64-bit length with the top bit
/// set) nothing that follows can be trusted: the parser stays failed and every call throws again.
///
/// Fragmentation, UTF-8 and message limits are the connection state machine's business.
public struct WebSocketFrameParser: Sendable {
    /// Which end this parser runs at: the server reads masked client frames, the client unmasked ones.
    public enum Role: Sendable, Hashable {
        case server
        case client
    }

    /// A consumed prefix at least this large (and at least half the buffer) is dropped on the next append.
    static let compactionThreshold = 4 * 1024

    public let role: Role
    public let maxFramePayloadBytes: Int
    /// RSV bits a negotiated extension gives meaning to (e.g. `0x40` for permessage-deflate); none by default.
    public let allowedReservedBits: UInt8

    private var buffer: [UInt8] = []
    /// Everything before `readIndex` is consumed.
    private var readIndex = 0
    /// Payload bytes of a refused frame still to be discarded as they arrive.
    private var skipRemaining: UInt64 = 0
    private var failure: WebSocketProtocolError?

    public init(role: Role = .server, maxFramePayloadBytes: Int = 1 << 20, allowedReservedBits: UInt8 = 0) {
        self.role = role
        self.maxFramePayloadBytes = max(0, maxFramePayloadBytes)
        self.allowedReservedBits = allowedReservedBits & 0x70
    }

    /// Bytes received but not yet consumed.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let bytes = prepareForAppend(bytes) else { return }
        if buffer.isEmpty {
            buffer = Array(bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    /// Adds received bytes.
    public mutating func append<C: Collection>(contentsOf bytes: C) where C.Element == UInt8 {
        if let done = bytes.withContiguousStorageIfAvailable({ storage -> Bool in
            append(UnsafeRawBufferPointer(storage))
            return true
        }), done {
            return
        }
        append(contentsOf: Array(bytes))
    }

    /// Drops skipped bytes and compacts the buffer; returns what is left to store, or nil for nothing.
    private mutating func prepareForAppend(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        if failure != nil { return nil }
        var bytes = bytes
        if skipRemaining > 0 {
            let skipped = Int(min(skipRemaining, UInt64(bytes.count)))
            skipRemaining -= UInt64(skipped)
            bytes = UnsafeRawBufferPointer(rebasing: bytes[skipped...])
        }
        if bytes.isEmpty { return nil }
        if readIndex > 0 && (readIndex >= Self.compactionThreshold || readIndex * 2 >= buffer.count) {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        return bytes
    }

    /// The next complete frame, or nil when more bytes are needed.
    public mutating func next() throws(WebSocketProtocolError) -> WebSocketFrame? {
        if let failure { throw failure }
        let available = buffer.count - readIndex
        guard available >= 2 else { return nil }
        // Header: FIN, RSV1-3, opcode | MASK, 7-bit length [, 16- or 64-bit length] [, 4-byte mask key].
        let first = buffer[readIndex]
        let second = buffer[readIndex + 1]
        let masked = second & 0x80 != 0
        let shortLength = second & 0x7F
        let lengthBytes = shortLength == 126 ? 2 : (shortLength == 127 ? 8 : 0)
        let headerLength = 2 + lengthBytes + (masked ? 4 : 0)
        guard available >= headerLength else { return nil }

        var length = UInt64(shortLength)
        if lengthBytes > 0 {
            length = 0
            for i in 0..<lengthBytes { length = length << 8 | UInt64(buffer[readIndex + 2 + i]) }
            if lengthBytes == 8 && length & (1 << 63) != 0 {
                let error = WebSocketProtocolError.protocolViolation(
                    "64-bit payload length with the most significant bit set")
                failure = error
                buffer = []
                readIndex = 0
                throw error
            }
        }

        let fin = first & 0x80 != 0
        let reservedBits = first & 0x70
        if let error = violation(first: first, fin: fin, reservedBits: reservedBits, masked: masked, length: length) {
            skipFrame(headerLength: headerLength, payloadLength: length)
            throw error
        }
        // Validated above: the opcode is known and the length is at most maxFramePayloadBytes.
        let opcode = WebSocketOpcode(rawValue: first & 0x0F)!
        let payloadLength = Int(length)
        guard available - headerLength >= payloadLength else {
            // Waiting for the payload: grow once to the whole frame rather than by doubling.
            buffer.reserveCapacity(readIndex + headerLength + payloadLength)
            return nil
        }

        let payloadStart = readIndex + headerLength
        let payload: [UInt8]
        if payloadLength == 0 {
            payload = []
        } else if masked {
            let maskOffset = readIndex + headerLength - 4
            let key = WebSocketMasking.key(
                buffer[maskOffset], buffer[maskOffset + 1], buffer[maskOffset + 2],
                buffer[maskOffset + 3])
            payload = buffer.withUnsafeBytes { source in
                [UInt8](unsafeUninitializedCapacity: payloadLength) { destination, initialized in
                    WebSocketMasking.apply(
                        key: key, from: source.baseAddress! + payloadStart,
                        to: UnsafeMutableRawPointer(destination.baseAddress!), count: payloadLength)
                    initialized = payloadLength
                }
            }
        } else {
            payload = Array(buffer[payloadStart..<(payloadStart + payloadLength)])
        }
        consume(headerLength + payloadLength)
        return WebSocketFrame(fin: fin, reservedBits: reservedBits, opcode: opcode, payload: payload)
    }

    /// The rule a complete header breaks, if any; 1002 violations first, the size limit (1009) last.
    private func violation(
        first: UInt8, fin: Bool, reservedBits: UInt8, masked: Bool,
        length: UInt64
    ) -> WebSocketProtocolError? {
        if reservedBits & ~allowedReservedBits != 0 {
            return .protocolViolation("reserved bits set without a negotiated extension")
        }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            return .protocolViolation("reserved opcode \(first & 0x0F)")
        }
        if opcode.isControl {
            if !fin { return .protocolViolation("fragmented control frame") }
            if length > 125 { return .protocolViolation("control frame payload over 125 bytes") }
        }
        switch role {
        case .server where !masked: return .protocolViolation("unmasked client frame")
        case .client where masked: return .protocolViolation("masked server frame")
        default: break
        }
        if length > UInt64(maxFramePayloadBytes) {
            return .tooBig("frame payload of \(length) bytes over the limit of \(maxFramePayloadBytes)")
        }
        return nil
    }

    /// Consumes a refused frame: the header and whatever payload is buffered now, the rest as it arrives.
    private mutating func skipFrame(headerLength: Int, payloadLength: UInt64) {
        let bufferedPayload = UInt64(buffer.count - readIndex - headerLength)
        let now = min(bufferedPayload, payloadLength)
        skipRemaining = payloadLength - now
        consume(headerLength + Int(now))
    }

    private mutating func consume(_ count: Int) {
        readIndex += count
        if readIndex == buffer.count {
            // Drained: an idle connection keeps no buffer at all.
            buffer = []
            readIndex = 0
        }
    }
}

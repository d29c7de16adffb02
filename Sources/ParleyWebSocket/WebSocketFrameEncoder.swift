/// Writes frames (RFC 6455 §5.2): unmasked for the server, masked with a fresh random key for a client
/// (§5.3). Every frame is one contiguous array, header and payload, ready for a single write.
///
/// Fan-out encodes a message once with ``server`` and hands the same array to every session
/// (`WebSocketSession.send(encodedFrame:)`); arrays are copy-on-write, so nothing is copied per recipient
/// until the bytes reach a connection's output buffer.
public struct WebSocketFrameEncoder: Sendable {
    /// Server-to-client frames: never masked (§5.1).
    public static let server = WebSocketFrameEncoder(masking: false)
    /// Client-to-server frames: always masked.
    public static let client = WebSocketFrameEncoder(masking: true)

    public let masking: Bool

    public init(masking: Bool) { self.masking = masking }

    /// The header size for a payload: 2 bytes, plus 2 or 8 for the extended length, plus 4 for the mask key.
    public static func headerLength(payloadLength: Int, masked: Bool) -> Int {
        let lengthBytes = payloadLength <= 125 ? 0 : (payloadLength <= 0xFFFF ? 2 : 8)
        return 2 + lengthBytes + (masked ? 4 : 0)
    }

    /// Encodes one frame. `maskKey` (wire order, read in memory order) is for tests; by default a masking
    /// encoder draws a fresh key from the system's secure generator for every frame.
    public func encode(
        opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer, fin: Bool = true,
        reservedBits: UInt8 = 0, maskKey: UInt32? = nil
    ) -> [UInt8] {
        let count = payload.count
        let headerLength = Self.headerLength(payloadLength: count, masked: masking)
        return [UInt8](unsafeUninitializedCapacity: headerLength + count) { out, initialized in
            out[0] = (fin ? 0x80 : 0) | (reservedBits & 0x70) | opcode.rawValue
            let maskBit: UInt8 = masking ? 0x80 : 0
            var index = 2
            if count <= 125 {
                out[1] = maskBit | UInt8(count)
            } else if count <= 0xFFFF {
                out[1] = maskBit | 126
                out[2] = UInt8(truncatingIfNeeded: count >> 8)
                out[3] = UInt8(truncatingIfNeeded: count)
                index = 4
            } else {
                out[1] = maskBit | 127
                for i in 0..<8 { out[2 + i] = UInt8(truncatingIfNeeded: UInt64(count) >> (56 - 8 * i)) }
                index = 10
            }
            let destination = UnsafeMutableRawPointer(out.baseAddress! + headerLength)
            if masking {
                var generator = SystemRandomNumberGenerator()
                let key = maskKey ?? UInt32.random(in: .min ... .max, using: &generator)
                withUnsafeBytes(of: key) { keyBytes in
                    for i in 0..<4 { out[index + i] = keyBytes[i] }
                }
                if count > 0 {
                    WebSocketMasking.apply(key: key, from: payload.baseAddress!, to: destination, count: count)
                }
            } else if count > 0 {
                destination.copyMemory(from: payload.baseAddress!, byteCount: count)
            }
            initialized = headerLength + count
        }
    }

    public func encode(
        opcode: WebSocketOpcode, payload: [UInt8], fin: Bool = true, reservedBits: UInt8 = 0,
        maskKey: UInt32? = nil
    ) -> [UInt8] {
        payload.withUnsafeBytes {
            encode(opcode: opcode, payload: $0, fin: fin, reservedBits: reservedBits, maskKey: maskKey)
        }
    }

    /// A text frame straight from the string's UTF-8 storage (one copy).
    public func encodeText(_ text: String, fin: Bool = true) -> [UInt8] {
        var text = text
        return text.withUTF8 { encode(opcode: .text, payload: UnsafeRawBufferPointer($0), fin: fin) }
    }

    public func encodeClose(code: WebSocketCloseCode?, reason: String = "") -> [UInt8] {
        encode(opcode: .close, payload: WebSocketClosePayload.encode(code: code, reason: reason))
    }
}

/// The body of a Close frame (RFC 6455 §5.5.1): an optional 2-byte code, then an optional UTF-8 reason.
public enum WebSocketClosePayload {
    /// Control frames carry at most 125 bytes, so a reason is cut to 123 at a character boundary.
    public static let maxReasonBytes = 123

    public static func encode(code: WebSocketCloseCode?, reason: String = "") -> [UInt8] {
        guard let code else { return [] }
        var out: [UInt8] = [UInt8(truncatingIfNeeded: code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)]
        var taken = 0
        for scalar in reason.unicodeScalars {
            let width = UTF8.width(scalar)
            if taken + width > maxReasonBytes { break }
            out.append(contentsOf: UTF8.encode(scalar)!)
            taken += width
        }
        return out
    }

    /// Reads a received Close payload: one byte alone -> 1002 (§5.5.1), a code that may not be sent ->
    /// 1002 (§7.4), a reason that is not UTF-8 -> 1007 (§5.5.1). An empty payload has no code.
    public static func decode(_ payload: [UInt8]) throws(WebSocketProtocolError) -> (
        code: WebSocketCloseCode?, reason: String
    ) {
        if payload.isEmpty { return (nil, "") }
        if payload.count == 1 { throw .protocolViolation("close payload of one byte") }
        let code = WebSocketCloseCode(UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isSendable else { throw .protocolViolation("invalid close code \(code.rawValue)") }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else {
            throw .invalidUTF8("close reason is not valid UTF-8")
        }
        return (code, reason)
    }
}

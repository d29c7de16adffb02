@testable import ParleyWebSocket

/// Frames for the parser and state machine tests.
enum TestFrames {
    /// RFC 6455 §5.7's mask key (0x37 0xfa 0x21 0x3d), so masked encodings are reproducible.
    static let maskKey = WebSocketMasking.key(0x37, 0xFA, 0x21, 0x3D)

    static func payload(_ count: Int, seed: Int = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) &+ seed &+ ($0 >> 8)) }
    }

    /// A masked client frame, as a server receives it.
    static func client(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0) -> [UInt8] {
        WebSocketFrameEncoder.client.encode(
            opcode: opcode, payload: payload, fin: fin, reservedBits: rsv, maskKey: maskKey)
    }

    static func client(_ opcode: WebSocketOpcode, _ text: String, fin: Bool = true) -> [UInt8] {
        client(opcode, Array(text.utf8), fin: fin)
    }

    /// An unmasked server frame, as a client receives it.
    static func server(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        WebSocketFrameEncoder.server.encode(opcode: opcode, payload: payload, fin: fin)
    }

    /// A header written by hand: any opcode/bits/length encoding, optionally masked with `maskKey`.
    static func raw(first: UInt8, payload: [UInt8], masked: Bool = true, lengthBytes: Int? = nil) -> [UInt8] {
        var out: [UInt8] = [first]
        let count = payload.count
        let width = lengthBytes ?? (count <= 125 ? 0 : (count <= 0xFFFF ? 2 : 8))
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch width {
        case 0: out.append(maskBit | UInt8(count))
        case 2: out += [maskBit | 126, UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
        default:
            out.append(maskBit | 127)
            for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: UInt64(count) >> (56 - 8 * i))) }
        }
        if masked {
            let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
            out += key
            out += payload.enumerated().map { $0.element ^ key[$0.offset & 3] }
        } else {
            out += payload
        }
        return out
    }

    static func close(_ code: UInt16?, _ reason: String = "") -> WebSocketFrame {
        var payload: [UInt8] = []
        if let code { payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8) }
        return WebSocketFrame(opcode: .close, payload: payload)
    }

    static func text(_ text: String, fin: Bool = true) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: .text, payload: Array(text.utf8))
    }

    static func continuation(_ bytes: [UInt8], fin: Bool = true) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: .continuation, payload: bytes)
    }

    static func continuation(_ text: String, fin: Bool = true) -> WebSocketFrame {
        continuation(Array(text.utf8), fin: fin)
    }
}

extension WebSocketFrameParser {
    /// Every frame currently parseable; stops at the first error (returned).
    mutating func drain() -> (frames: [WebSocketFrame], error: WebSocketProtocolError?) {
        var frames: [WebSocketFrame] = []
        while true {
            do {
                guard let frame = try next() else { return (frames, nil) }
                frames.append(frame)
            } catch {
                return (frames, error)
            }
        }
    }
}

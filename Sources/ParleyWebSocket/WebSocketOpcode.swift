/// The frame opcodes RFC 6455 defines (§5.2, §11.8). Any other value fails the connection with 1002.
public enum WebSocketOpcode: UInt8, Sendable, Hashable, CaseIterable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Control frames (close, ping, pong) have the high bit of the opcode set (§5.5).
    @inlinable
    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// One frame as read from the wire, already unmasked (RFC 6455 §5.2).
public struct WebSocketFrame: Sendable, Hashable {
    /// The final fragment of a message (control frames are always final).
    public var fin: Bool
    /// RSV1-3 in their wire positions (`0x40`, `0x20`, `0x10`); zero unless an extension was negotiated.
    public var reservedBits: UInt8
    public var opcode: WebSocketOpcode
    /// The application data, unmasked.
    public var payload: [UInt8]

    public init(fin: Bool = true, reservedBits: UInt8 = 0, opcode: WebSocketOpcode, payload: [UInt8] = []) {
        self.fin = fin
        self.reservedBits = reservedBits
        self.opcode = opcode
        self.payload = payload
    }
}

extension WebSocketFrame: CustomStringConvertible {
    public var description: String {
        let flags = (fin ? "" : ", fin: false") + (reservedBits == 0 ? "" : ", rsv: \(reservedBits)")
        return "WebSocketFrame(\(opcode)\(flags), \(payload.count) bytes)"
    }
}

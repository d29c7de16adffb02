/// Client-to-server masking (RFC 6455 §5.3): byte `i` of the payload is XORed with byte `i % 4` of the key.
/// Masking and unmasking are the same operation.
enum WebSocketMasking {
    /// Copies `count` bytes from `source` to `destination`, XORing them with `key` (the four key bytes as
    /// they appear on the wire, in memory order). Eight bytes at a time: payloads start at key phase 0, so
    /// the key repeated twice lines up with every 8-byte word of the payload.
    @inline(__always)
    static func apply(
        key: UInt32, from source: UnsafeRawPointer, to destination: UnsafeMutableRawPointer,
        count: Int
    ) {
        let wide = UInt64(key) | UInt64(key) << 32
        var offset = 0
        while offset + 8 <= count {
            let word = source.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            destination.storeBytes(of: word ^ wide, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        withUnsafeBytes(of: key) { keyBytes in
            while offset < count {
                let byte = source.load(fromByteOffset: offset, as: UInt8.self) ^ keyBytes[offset & 3]
                destination.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self)
                offset += 1
            }
        }
    }

    /// The key as it is stored in a frame header: its four bytes in wire order, read in memory order.
    @inline(__always)
    static func key(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) -> UInt32 {
        var key: UInt32 = 0
        withUnsafeMutableBytes(of: &key) { raw in
            raw[0] = b0
            raw[1] = b1
            raw[2] = b2
            raw[3] = b3
        }
        return key
    }
}

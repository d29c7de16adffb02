/// Incremental UTF-8 validation (RFC 3629 §4, the Unicode "well-formed" table) for text messages that
/// arrive in fragments: it remembers an unfinished sequence across calls and fails on the first byte
/// that makes the prefix invalid, so a bad message is refused fast (RFC 6455 §8.1) rather than at its end.
/// Refuses overlong forms, surrogates (U+D800-DFFF), code points over U+10FFFF, and C0, C1, F5-FF.
public struct UTF8Validator: Sendable, Hashable {
    /// 0: between characters; 1-3: that many continuation bytes (80-BF) still expected; 4-7: the byte after
    /// E0, ED, F0, F4 has a narrower range; `rejected`: invalid, and stays so.
    private var state: UInt8 = 0
    private static let rejected: UInt8 = 0xFF

    public init() {}

    /// True when everything so far is valid and no character is cut off.
    public var isComplete: Bool { state == 0 }
    /// True once an invalid byte was seen.
    public var isRejected: Bool { state == Self.rejected }

    /// Validates the next bytes; false as soon as the input so far cannot be a prefix of valid UTF-8.
    @discardableResult
    public mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if state == Self.rejected { return false }
        var state = self.state
        var index = 0
        let count = bytes.count
        while index < count {
            if state == 0 {
                // ASCII runs (JSON is mostly ASCII), eight bytes at a time.
                while index + 8 <= count,
                    bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    index += 8
                }
                if index == count { break }
            }
            state = Self.step(state, bytes[index])
            if state == Self.rejected {
                self.state = state
                return false
            }
            index += 1
        }
        self.state = state
        return true
    }

    @discardableResult
    public mutating func validate(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { validate($0) }
    }

    @inline(__always)
    private static func step(_ state: UInt8, _ byte: UInt8) -> UInt8 {
        switch state {
        case 0:
            switch byte {
            case 0x00...0x7F: return 0
            case 0xC2...0xDF: return 1
            case 0xE0: return 4
            case 0xE1...0xEC, 0xEE...0xEF: return 2
            case 0xED: return 5
            case 0xF0: return 6
            case 0xF1...0xF3: return 3
            case 0xF4: return 7
            default: return rejected // 80-BF stray continuation, C0/C1 overlong, F5-FF out of range
            }
        case 1, 2, 3:
            return byte & 0xC0 == 0x80 ? state - 1 : rejected
        case 4: // E0: A0-BF (no overlong 3-byte forms)
            return (0xA0...0xBF).contains(byte) ? 1 : rejected
        case 5: // ED: 80-9F (no surrogates)
            return (0x80...0x9F).contains(byte) ? 1 : rejected
        case 6: // F0: 90-BF (no overlong 4-byte forms)
            return (0x90...0xBF).contains(byte) ? 2 : rejected
        case 7: // F4: 80-8F (nothing above U+10FFFF)
            return (0x80...0x8F).contains(byte) ? 2 : rejected
        default:
            return rejected
        }
    }
}

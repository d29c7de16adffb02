/// The RFC 4648 base64 algorithm, parameterised by alphabet; `Base64` and `Base64URL` wrap it.
struct Base64Codec: Sendable {
    /// What the decoder does with trailing `=` padding.
    enum Padding {
        /// Padding may be present (then it must be exactly right) or absent.
        case optional
        /// Padding must be absent (JWS compact serialisation, RFC 7515 section 2).
        case forbidden
    }

    private let alphabet: [UInt8]
    /// Maps an ASCII byte to its 6-bit value, or 0xFF for bytes outside the alphabet.
    private let reverse: [UInt8]

    private init(alphabet: String) {
        let symbols = Array(alphabet.utf8)
        var reverse = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in symbols.enumerated() {
            reverse[Int(symbol)] = UInt8(value)
        }
        self.alphabet = symbols
        self.reverse = reverse
    }

    /// RFC 4648 section 4.
    static let standard = Base64Codec(
        alphabet: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    /// RFC 4648 section 5: URL- and filename-safe.
    static let url = Base64Codec(
        alphabet: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    func encode(_ bytes: some Collection<UInt8>, padding: Bool) -> String {
        withBytes(bytes) { pointer, count in
            let input = UnsafeRawBufferPointer(start: pointer, count: count)
            let fullGroups = count / 3
            let remainder = count % 3
            let length = fullGroups * 4 + (remainder == 0 ? 0 : (padding ? 4 : remainder + 1))
            return String(unsafeUninitializedCapacity: length) { output in
                var i = 0
                var o = 0
                for _ in 0..<fullGroups {
                    let value = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                    output[o] = alphabet[Int(value >> 18 & 0x3F)]
                    output[o + 1] = alphabet[Int(value >> 12 & 0x3F)]
                    output[o + 2] = alphabet[Int(value >> 6 & 0x3F)]
                    output[o + 3] = alphabet[Int(value & 0x3F)]
                    i += 3
                    o += 4
                }
                if remainder > 0 {
                    let second: UInt32 = remainder == 2 ? UInt32(input[i + 1]) : 0
                    let value = UInt32(input[i]) << 16 | second << 8
                    output[o] = alphabet[Int(value >> 18 & 0x3F)]
                    output[o + 1] = alphabet[Int(value >> 12 & 0x3F)]
                    o += 2
                    if remainder == 2 {
                        output[o] = alphabet[Int(value >> 6 & 0x3F)]
                        o += 1
                    }
                    if padding {
                        while o < length {
                            output[o] = UInt8(ascii: "=")
                            o += 1
                        }
                    }
                }
                return length
            }
        }
    }

    /// Decodes strictly: no whitespace, no characters outside the alphabet, and the unused low
    /// bits of the last symbol must be zero (RFC 4648 section 3.5), so every byte string has
    /// exactly one accepted encoding and encoded tokens cannot be altered without detection.
    func decode(_ string: some Collection<UInt8>, padding: Padding) -> [UInt8]? {
        withBytes(string) { pointer, count in
            decode(UnsafeRawBufferPointer(start: pointer, count: count), padding: padding)
        }
    }

    /// Unpadded input of exactly `output.count` decoded bytes, into `output`.
    func decode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        let remainder = output.count % 3
        guard input.count == output.count / 3 * 4 + (remainder == 0 ? 0 : remainder + 1) else { return false }
        var accumulator: UInt32 = 0
        var symbols = 0
        var written = 0
        for index in 0..<input.count {
            let value = reverse[Int(input[index])]
            guard value != 0xFF else { return false }
            accumulator = accumulator << 6 | UInt32(value)
            symbols += 1
            if symbols == 4 {
                output[written] = UInt8(truncatingIfNeeded: accumulator >> 16)
                output[written + 1] = UInt8(truncatingIfNeeded: accumulator >> 8)
                output[written + 2] = UInt8(truncatingIfNeeded: accumulator)
                written += 3
                accumulator = 0
                symbols = 0
            }
        }
        switch symbols {
        case 2:
            guard accumulator & 0x0F == 0 else { return false }
            output[written] = UInt8(truncatingIfNeeded: accumulator >> 4)
        case 3:
            guard accumulator & 0x03 == 0 else { return false }
            output[written] = UInt8(truncatingIfNeeded: accumulator >> 10)
            output[written + 1] = UInt8(truncatingIfNeeded: accumulator >> 2)
        default:
            break
        }
        return true
    }

    private func decode(_ input: UnsafeRawBufferPointer, padding: Padding) -> [UInt8]? {
        var length = input.count
        var padCount = 0
        while length > 0 && input[length - 1] == UInt8(ascii: "=") {
            length -= 1
            padCount += 1
        }
        if padCount > 0 {
            guard padding == .optional, padCount <= 2, input.count % 4 == 0 else { return nil }
        }
        let remainder = length % 4
        // One leftover symbol carries only 6 bits: not a whole byte.
        guard remainder != 1 else { return nil }
        // Padding, when present, must complete exactly the final partial group.
        if padCount > 0 && (remainder == 0 || 4 - remainder != padCount) { return nil }

        let outputLength = length / 4 * 3 + (remainder == 0 ? 0 : remainder - 1)
        var output = [UInt8]()
        output.reserveCapacity(outputLength)
        var accumulator: UInt32 = 0
        var symbols = 0
        for index in 0..<length {
            let value = reverse[Int(input[index])]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            symbols += 1
            if symbols == 4 {
                output.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                output.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                output.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator = 0
                symbols = 0
            }
        }
        switch symbols {
        case 2:
            guard accumulator & 0x0F == 0 else { return nil }
            output.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case 3:
            guard accumulator & 0x03 == 0 else { return nil }
            output.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            output.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default:
            break
        }
        return output
    }
}

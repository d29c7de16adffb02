/// Hexadecimal (base16) encoding.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Returns the lowercase hexadecimal form of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let length = bytes.count * 2
        return String(unsafeUninitializedCapacity: length) { output in
            var index = 0
            for byte in bytes {
                output[index] = digits[Int(byte >> 4)]
                output[index + 1] = digits[Int(byte & 0x0F)]
                index += 2
            }
            return length
        }
    }

    /// Decodes hexadecimal (either case); returns `nil` for odd lengths or non-hex characters.
    public static func decode(_ string: String) -> [UInt8]? {
        let utf8 = string.utf8
        guard utf8.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(utf8.count / 2)
        var high: UInt8? = nil
        for character in utf8 {
            guard let nibble = value(of: character) else { return nil }
            if let h = high {
                result.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return result
    }

    private static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return character - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

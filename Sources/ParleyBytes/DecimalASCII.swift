/// Decimal digits of an integer appended to a byte buffer, with no intermediate String: used on
/// per-request paths (Content-Length, access-log numbers).
public enum DecimalASCII {
    public static func append(_ value: Int, to bytes: inout [UInt8]) {
        withDigits(of: value) { bytes.append(contentsOf: $0) }
    }

    public static func append(_ value: Int, to bytes: inout ByteBuffer) {
        withDigits(of: value) { bytes.append($0) }
    }

    /// `value` (not negative) with at least `width` digits, zero-padded on the left: dates and times.
    public static func appendPadded(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        withDigits(of: value) { digits in
            for _ in digits.count..<max(width, digits.count) { bytes.append(UInt8(ascii: "0")) }
            bytes.append(contentsOf: digits)
        }
    }

    public static func appendPadded(_ value: Int, width: Int, to bytes: inout ByteBuffer) {
        withDigits(of: value) { digits in
            for _ in digits.count..<max(width, digits.count) { bytes.append(UInt8(ascii: "0")) }
            bytes.append(digits)
        }
    }

    /// The digits of `value` (with a leading `-` when negative), formatted on the stack.
    @inline(__always)
    public static func withDigits(of value: Int, _ body: (UnsafeRawBufferPointer) -> Void) {
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { raw in
            var index = raw.count
            repeat {
                index -= 1
                raw[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            if value < 0 {
                index -= 1
                raw[index] = UInt8(ascii: "-")
            }
            body(UnsafeRawBufferPointer(rebasing: raw[index...]))
        }
    }
}

/// A JSON number kept as its validated RFC 8259 text (so 64-bit ids and sizes round-trip exactly).
///
/// Equality and hashing compare the text: `1` and `1.0` are different numbers here. Compare
/// `int64Value` or `doubleValue` when numeric equality is meant.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number exactly as written (RFC 8259 §6 grammar).
    public let text: String

    /// Wraps `text` when it is a valid RFC 8259 number: no leading `+`, no leading zeros, digits on
    /// both sides of a `.`, an exponent with at least one digit, no surrounding whitespace.
    public init?(text: String) {
        let valid =
            text.utf8.withContiguousStorageIfAvailable { JSONNumber.isValid($0) }
            ?? JSONNumber.isValid(Array(text.utf8))
        guard valid else { return nil }
        self.text = text
    }

    /// For text the parser has already validated.
    init(uncheckedText text: String) {
        self.text = text
    }

    public init(_ value: Int64) {
        self.text = String(value)
    }

    public init(_ value: Int) {
        self.text = String(value)
    }

    /// The shortest text that reads back as `value` (`1.0` is written `1`); nil for NaN and
    /// infinities, which JSON cannot represent.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        // Swift's description is the shortest round-trip form and always valid RFC 8259 text
        // ("1e-07", "1.2e+20"); only the ".0" of integral values is noise.
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        self.text = text
    }

    public var description: String { text }

    /// The value when it is an exact integer that fits `Int64`: "12", "-3", and also "1.0", "1e3"
    /// or "150e-1" when the decimal value is integral. Nil for fractions and out-of-range values
    /// such as "12345678901234567890".
    public var int64Value: Int64? {
        if let value = text.utf8.withContiguousStorageIfAvailable({ JSONNumber.exactInt64($0) }) {
            return value
        }
        return JSONNumber.exactInt64(Array(text.utf8))
    }

    /// The nearest `Double`; ±infinity for magnitudes beyond `Double`'s range.
    public var doubleValue: Double {
        if let value = Double(text) { return value }
        // Unreachable for validated text with the current stdlib, which already rounds overflow
        // to infinity; kept so a parsing change cannot crash a caller.
        return text.hasPrefix("-") ? -.infinity : .infinity
    }

    /// True when `int64Value` is not nil.
    public var isInteger: Bool { int64Value != nil }
}

extension JSONNumber {
    /// Whether `bytes` is exactly one RFC 8259 number.
    static func isValid<C: Collection<UInt8>>(_ bytes: C) -> Bool where C.Index == Int {
        var position = bytes.startIndex
        guard JSONNumber.scan(bytes, from: &position) == nil else { return false }
        return position == bytes.endIndex
    }

    /// Scans the number grammar (RFC 8259 §6) starting at `position`, leaving `position` after the
    /// last byte of the number. Returns the failure when the text is not a number.
    @inline(__always)
    static func scan<C: Collection<UInt8>>(_ bytes: C, from position: inout Int) -> NumberScanFailure?
    where C.Index == Int {
        let end = bytes.endIndex
        var index = position
        defer { position = index }
        if index < end, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < end else { return .invalid(index) }
        let first = bytes[index]
        if first == UInt8(ascii: "0") {
            index += 1
            if index < end, isDigit(bytes[index]) { return .leadingZero(index - 1) }
        } else if isDigit(first) {
            index += 1
            while index < end, isDigit(bytes[index]) { index += 1 }
        } else {
            return .invalid(index)
        }
        if index < end, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < end, isDigit(bytes[index]) else { return .invalid(index) }
            index += 1
            while index < end, isDigit(bytes[index]) { index += 1 }
        }
        if index < end, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < end, isDigit(bytes[index]) else { return .invalid(index) }
            index += 1
            while index < end, isDigit(bytes[index]) { index += 1 }
        }
        return nil
    }

    enum NumberScanFailure {
        case invalid(Int)
        case leadingZero(Int)
    }

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// Exact decimal-to-integer conversion of validated number text, without going through
    /// `Double` (which would round ids above 2^53).
    static func exactInt64<C: Collection<UInt8>>(_ bytes: C) -> Int64? where C.Index == Int {
        var index = bytes.startIndex
        let end = bytes.endIndex
        let negative = index < end && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }

        // Significant digits of the integer and fraction parts, without leading zeros. Trailing
        // zeros are only counted, so "1.000" and "100e-2" cost nothing extra.
        var magnitude: UInt64 = 0
        var significantDigits = 0
        var pendingZeros = 0
        var overflow = false
        var decimalExponent = 0
        var inFraction = false
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if isDigit(byte) {
                if inFraction { decimalExponent -= 1 }
                if byte == UInt8(ascii: "0") {
                    if significantDigits > 0 { pendingZeros += 1 }
                } else {
                    // Zeros between significant digits become part of the significand.
                    significantDigits += pendingZeros + 1
                    if significantDigits > 20 {
                        overflow = true // 21 digits exceed UInt64; keep scanning only to validate
                    } else {
                        for _ in 0...pendingZeros {
                            let (scaled, o1) = magnitude.multipliedReportingOverflow(by: 10)
                            magnitude = scaled
                            overflow = overflow || o1
                        }
                        let (sum, o2) = magnitude.addingReportingOverflow(UInt64(byte &- UInt8(ascii: "0")))
                        magnitude = sum
                        overflow = overflow || o2
                    }
                    pendingZeros = 0
                }
            } else {
                break // the exponent marker
            }
            index += 1
        }
        guard significantDigits > 0 else { return 0 } // "0", "-0", "0.000e9"
        if overflow { return nil }
        decimalExponent += pendingZeros

        if index < end { // exponent; saturating, so a million-digit exponent cannot overflow
            index += 1
            var exponentNegative = false
            if bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var exponent = 0
            while index < end {
                if exponent < 1 << 48 { exponent = exponent * 10 + Int(bytes[index] &- UInt8(ascii: "0")) }
                index += 1
            }
            decimalExponent += exponentNegative ? -exponent : exponent
        }
        guard decimalExponent >= 0, decimalExponent <= 19 else { return nil }
        for _ in 0..<decimalExponent {
            let (scaled, overflowed) = magnitude.multipliedReportingOverflow(by: 10)
            if overflowed { return nil }
            magnitude = scaled
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return Int64(truncatingIfNeeded: 0 &- magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }
}

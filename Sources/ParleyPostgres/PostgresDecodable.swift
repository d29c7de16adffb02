import Foundation

/// A Swift type that can be read from a result column in PostgreSQL's text format.
public protocol PostgresDecodable: Sendable {
    /// `text` is the column's bytes (without terminator), or nil for SQL NULL. `typeOID` is the column's type.
    static func decode(postgresText text: UnsafeBufferPointer<UInt8>?, typeOID: UInt32) throws(PostgresError) -> Self
}

extension PostgresDecodable {
    @inline(__always)
    static func notNull(_ text: UnsafeBufferPointer<UInt8>?) throws(PostgresError) -> UnsafeBufferPointer<UInt8> {
        guard let text else { throw .decoding("unexpected NULL for non-optional \(Self.self)") }
        return text
    }
}

/// Parses a decimal integer ("-123") with overflow checks; nil for anything else.
@inline(__always)
func parseInteger(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
    var index = 0
    var negative = false
    if text.count > 0 && text[0] == UInt8(ascii: "-") {
        negative = true
        index = 1
    } else if text.count > 0 && text[0] == UInt8(ascii: "+") {
        index = 1
    }
    guard index < text.count else { return nil }
    var value: Int64 = 0
    while index < text.count {
        let digit = text[index] &- UInt8(ascii: "0")
        guard digit < 10 else { return nil }
        let (times10, o1) = value.multipliedReportingOverflow(by: 10)
        // Accumulate negatively so Int64.min parses.
        let (next, o2) = times10.subtractingReportingOverflow(Int64(digit))
        if o1 || o2 { return nil }
        value = next
        index += 1
    }
    if negative { return value }
    let (positive, overflow) = (0 as Int64).subtractingReportingOverflow(value)
    return overflow ? nil : positive
}

extension Int64: PostgresDecodable {
    public static func decode(postgresText text: UnsafeBufferPointer<UInt8>?, typeOID: UInt32) throws(PostgresError)
        -> Int64
    {
        guard let value = parseInteger(try notNull(text)) else {
            throw .decoding("column of type \(typeOID) is not an integer")
        }
        return value
    }
}

extension Int: PostgresDecodable {
    public static func decode(postgresText text: UnsafeBufferPointer<UInt8>?, typeOID: UInt32) throws(PostgresError)
        -> Int
    {
        Int(try Int64.decode(postgresText: text, typeOID: typeOID))
    }
}

extension Int32: PostgresDecodable {
    public static func decode(postgresText text: UnsafeBufferPointer<UInt8>?, typeOID: UInt32) throws(PostgresError)
        -> Int32
    {
        let wide = try Int64.decode(postgresText: text, typeOID: typeOID)
        guard let value = Int32(exactly: wide) else { throw .decoding("integer column does not fit in Int32") }
        return value
    }
}

extension String: PostgresDecodable {
    public static func decode(postgresText text: UnsafeBufferPointer<UInt8>?, typeOID: UInt32) throws(PostgresError)
        -> String
    {
        String(decoding: try notNull(text), as: UTF8.self)
    }
}

extension Bool: PostgresDecodable {
    public static func decode(postgresText text: UnsafeBufferPointer<UInt8>?, typeOID: UInt32) throws(PostgresError)
        -> Bool
    {
        let bytes = try notNull(text)
        if bytes.count == 1 {
            if bytes[0] == UInt8(ascii: "t") { return true }
            if bytes[0] == UInt8(ascii: "f") { return false }
        }
        throw .decoding("column of type \(typeOID) is not a boolean")
    }
}

extension Double: PostgresDecodable {
    public static func decode(postgresText text: UnsafeBufferPointer<UInt8>?, typeOID: UInt32) throws(PostgresError)
        -> Double
    {
        let bytes = try notNull(text)
        // float8 output: digits, "NaN", "Infinity", "-Infinity"; numeric output: digits or "NaN".
        switch bytes.count {
        case 3 where bytes.elementsEqual("NaN".utf8): return .nan
        case 8 where bytes.elementsEqual("Infinity".utf8): return .infinity
        case 9 where bytes.elementsEqual("-Infinity".utf8): return -.infinity
        default: break
        }
        if let integer = parseInteger(bytes), abs(integer) < 1 << 53 { return Double(integer) }
        guard let value = Double(String(decoding: bytes, as: UTF8.self)) else {
            throw .decoding("column of type \(typeOID) is not a number")
        }
        return value
    }
}

extension Array: PostgresDecodable where Element == UInt8 {
    /// `bytea` in hex output format (`\x0a1b…`, the default since PostgreSQL 9.0).
    public static func decode(postgresText text: UnsafeBufferPointer<UInt8>?, typeOID: UInt32) throws(PostgresError)
        -> [UInt8]
    {
        let bytes = try notNull(text)
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x"), bytes.count % 2 == 0
        else {
            throw .decoding("column of type \(typeOID) is not bytea in hex format")
        }
        let count = (bytes.count - 2) / 2
        var failed = false
        let result = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            for i in 0..<count {
                guard let high = hexValue(bytes[2 + 2 * i]), let low = hexValue(bytes[3 + 2 * i]) else {
                    failed = true
                    break
                }
                out[i] = high << 4 | low
                initialized = i + 1
            }
        }
        if failed { throw .decoding("invalid hex digit in bytea column") }
        return result
    }
}

@inline(__always)
private func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
}

extension Date: PostgresDecodable {
    /// `timestamptz`, `timestamp` (taken as UTC) or `date` (midnight UTC), in ISO `DateStyle` (the connection
    /// sets it). `infinity` / `-infinity` become `distantFuture` / `distantPast`.
    public static func decode(postgresText text: UnsafeBufferPointer<UInt8>?, typeOID: UInt32) throws(PostgresError)
        -> Date
    {
        guard let micros = PostgresTimestamp.parse(try notNull(text)) else {
            throw .decoding("column of type \(typeOID) is not an ISO timestamp")
        }
        if micros == .max { return .distantFuture }
        if micros == .min { return .distantPast }
        return PostgresTimestamp.date(microseconds: micros)
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    /// NULL decodes as nil.
    public static func decode(postgresText text: UnsafeBufferPointer<UInt8>?, typeOID: UInt32) throws(PostgresError)
        -> Wrapped?
    {
        guard text != nil else { return nil }
        return try Wrapped.decode(postgresText: text, typeOID: typeOID)
    }
}

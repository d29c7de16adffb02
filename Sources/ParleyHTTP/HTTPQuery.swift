/// A request's query string (`application/x-www-form-urlencoded` pairs, `a=1&b=x+y`) read in place: each
/// lookup scans the bytes as sent, nothing is split or collected, and a value without escapes comes back as a
/// `Substring` of the query itself, so reading a parameter allocates nothing. The only reader of queries: routes
/// do not parse them themselves.
///
/// - The first pair of a repeated name wins.
/// - Empty pairs (`a=1&&b=2`, a trailing `&`) are skipped; a pair without `=` has the empty value.
/// - Names and values are percent-decoded (`%2F`) with `+` as a space; a name is matched after decoding.
/// - A value whose escapes are malformed (`%G1`, a lone `%`) or decode to invalid UTF-8 is refused with 1002
///   naming the parameter; a pair whose name does not decode matches no name.
public struct HTTPQuery: Sendable {
    /// Everything after the first `?`, as sent; nil when the target has none.
    public let string: String?

    public init(_ string: String?) {
        self.string = string
    }

    /// The first value of `name`, percent-decoded; nil when the name is absent. Shares the query's storage when
    /// the value holds no `%` or `+` (the usual case); otherwise the decoded copy.
    public func value(for name: String) throws(APIError) -> Substring? {
        guard let raw = rawValue(for: name) else { return nil }
        guard Self.needsDecoding(raw.utf8) else { return raw }
        guard let decoded = PercentDecoding.decode(raw, plusAsSpace: true) else {
            throw APIError.validationFailed.with(message: "malformed percent-encoding in query parameter `\(name)`")
        }
        return Substring(decoded)
    }

    /// The first value of `name` as an integer in `range`: an optional `-` and 1-19 decimal digits (no `+`, no
    /// spaces). nil when the name is absent; anything else, the empty value included, is refused with 1002 naming the
    /// parameter and the range.
    public func integer(for name: String, in range: ClosedRange<Int64>) throws(APIError) -> Int64? {
        guard let raw = try value(for: name) else { return nil }
        let digits = raw.utf8.first == UInt8(ascii: "-") ? raw.utf8.dropFirst() : raw.utf8[...]
        guard (1...19).contains(digits.count),
            digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let value = Int64(raw), range.contains(value)
        else {
            throw APIError.validationFailed.with(
                message: "`\(name)` must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// A list's `limit`: 1 to `max`, `defaultLimit` when absent.
    public func limit(defaultLimit: Int, max: Int) throws(APIError) -> Int {
        Int(try integer(for: "limit", in: 1...Int64(max)) ?? Int64(defaultLimit))
    }

    /// The first value of `name` as a positive id (a page's cursor, an id a previous answer gave): 1-18 decimal
    /// digits, the first not 0 (openapi's `^[1-9][0-9]{0,17}$`). nil when the name is absent; anything else, the empty
    /// value included, is refused with 1002 naming the parameter.
    public func positiveID(for name: String) throws(APIError) -> Int64? {
        guard let raw = try value(for: name) else { return nil }
        let digits = raw.utf8
        guard (1...18).contains(digits.count), digits.first != UInt8(ascii: "0"),
            digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let id = Int64(raw)
        else {
            throw APIError.validationFailed.with(message: "`\(name)` must be an id from a previous answer")
        }
        return id
    }

    /// The first value of `name` exactly as sent (not decoded), sharing the query's storage; nil when absent.
    public func rawValue(for name: String) -> Substring? {
        guard let string, !string.isEmpty, let range = Self.valueRange(of: name, in: string) else { return nil }
        let utf8 = string.utf8
        return Substring(
            utf8[
                utf8.index(
                    utf8.startIndex, offsetBy: range.lowerBound)..<utf8.index(
                        utf8.startIndex, offsetBy: range.upperBound)])
    }

    /// True when `name` appears, with or without a value.
    public func contains(_ name: String) -> Bool {
        rawValue(for: name) != nil
    }

    /// The byte offsets of the first value of `name` in `query`.
    private static func valueRange(of name: String, in query: String) -> Range<Int>? {
        withUTF8(query) { bytes in
            withUTF8(name) { wanted in
                var start = 0
                while start < bytes.count {
                    var end = start
                    var equals = -1
                    while end < bytes.count && bytes[end] != UInt8(ascii: "&") {
                        if equals < 0 && bytes[end] == UInt8(ascii: "=") { equals = end }
                        end += 1
                    }
                    if end > start {
                        let nameEnd = equals < 0 ? end : equals
                        if nameMatches(UnsafeBufferPointer(rebasing: bytes[start..<nameEnd]), wanted) {
                            return (equals < 0 ? end : equals + 1)..<end
                        }
                    }
                    start = end + 1
                }
                return nil
            }
        }
    }

    /// Compares bytes as sent; a name holding an escape is decoded first (rare: only then is anything allocated).
    private static func nameMatches(_ candidate: UnsafeBufferPointer<UInt8>, _ wanted: UnsafeBufferPointer<UInt8>)
        -> Bool
    {
        if !needsDecoding(candidate) { return candidate.elementsEqual(wanted) }
        guard let decoded = PercentDecoding.decode(String(decoding: candidate, as: UTF8.self), plusAsSpace: true) else {
            return false
        }
        return decoded.utf8.elementsEqual(wanted)
    }

    @inline(__always)
    private static func needsDecoding<C: Collection<UInt8>>(_ bytes: C) -> Bool {
        bytes.contains { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }
    }

    /// A string's UTF-8 in place (no copy for native strings; a bridged one is copied).
    @inline(__always)
    private static func withUTF8<R>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = string
        return copy.withUTF8(body)
    }
}

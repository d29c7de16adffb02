import ParleyHTTP
import ParleyJSON

/// What PostgreSQL's jsonb cannot hold, and the database reads every message's content as jsonb (the file
/// references, the push previews): U+0000 in a string or a member name, and numbers beyond `numeric`'s range.
/// Refused up front with 1002, instead of failing the insert: a 500, and a send batch replayed one message at a time.
enum StorableJSON {
    /// Exponents beyond this are refused (`numeric` holds about 131,000 digits before the point and 16,383 after;
    /// no message needs more than a few hundred).
    static let maxExponent = 10_000

    static func check(_ value: JSONValue, field: @autoclosure () -> String) throws(APIError) {
        switch value {
        case .string(let text):
            if text.utf8.contains(0) { throw invalid(field(), "must not contain U+0000 (NUL)") }
        case .number(let number):
            if !isStorable(number) {
                throw invalid(field(), "holds a number beyond what can be stored (exponent within ±\(maxExponent))")
            }
        case .array(let items):
            for (index, item) in items.enumerated() { try check(item, field: "\(field())[\(index)]") }
        case .object(let object):
            for (name, member) in object {
                if name.utf8.contains(0) { throw invalid(field(), "must not have a member name with U+0000 (NUL)") }
                try check(member, field: "\(field()).\(name)")
            }
        case .null, .bool:
            return
        }
    }

    /// The exponent as written (`1e400`, `2.5E-7`) within ±`maxExponent`; a number without one always fits.
    static func isStorable(_ number: JSONNumber) -> Bool {
        let text = number.text.utf8
        guard let marker = text.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else {
            return true
        }
        guard let exponent = Int(Substring(number.text.utf8[text.index(after: marker)...])) else { return false }
        return abs(exponent) <= maxExponent
    }

    private static func invalid(_ field: String, _ problem: String) -> APIError {
        APIError.validationFailed.with(message: "`\(field)` \(problem)")
    }
}

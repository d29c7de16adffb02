/// What to send for a GET given its `Range` header (RFC 9110 §14).
public enum RangeDecision: Sendable, Hashable {
    /// 200 with the whole representation: no Range, or one Parley ignores (RFC 9110 §14.2 allows ignoring it).
    case full
    /// 206 with these bytes (inclusive, within the representation).
    case partial(ClosedRange<Int64>)
    /// 416 with `Content-Range: bytes */size`.
    case unsatisfiable
}

/// Reads a `Range` request header for a representation of known size. Only single byte ranges are served,
/// which is what media players and download resumers send; anything else is answered with the whole file,
/// which RFC 9110 §14.2 permits, so a client never fails because of a Range form Parley does not serve.
public enum ByteRangeRequest {
    /// - Parameters:
    ///   - rangeHeader: the `Range` field value, if present.
    ///   - size: the representation's length in bytes (not negative).
    public static func evaluate(rangeHeader: String?, size: Int64) -> RangeDecision {
        precondition(size >= 0, "negative representation size")
        guard let rangeHeader, let spec = singleRange(rangeHeader) else { return .full }
        switch spec {
        case .from(let first, let last):
            // RFC 9110 §14.1.1: first-pos beyond the end makes the range unsatisfiable; last-pos is clamped.
            guard first < size else { return .unsatisfiable }
            return .partial(first...min(last ?? (size - 1), size - 1))
        case .suffix(let length):
            // RFC 9110 §14.1.1: a zero-length suffix selects nothing; one longer than the file selects all of it.
            guard length > 0, size > 0 else { return .unsatisfiable }
            return .partial(max(0, size - length)...(size - 1))
        }
    }

    /// `bytes 0-499/1234`, the `Content-Range` of a 206 (RFC 9110 §14.4).
    public static func contentRange(_ range: ClosedRange<Int64>, size: Int64) -> String {
        "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
    }

    /// `bytes */1234`, the `Content-Range` of a 416 (RFC 9110 §14.4).
    public static func unsatisfiedContentRange(size: Int64) -> String {
        "bytes */\(size)"
    }

    enum Spec: Equatable {
        case from(Int64, Int64?)
        case suffix(Int64)
    }

    /// The one range of a `bytes=` header; nil for another unit, a syntax error, more than one range, or
    /// first-pos > last-pos (all of which mean "ignore the header").
    static func singleRange(_ header: String) -> Spec? {
        let text = Substring(header).trimmingCharacters(where: isWhitespace)
        guard let equals = text.firstIndex(of: "=") else { return nil }
        // Range units are case-insensitive (RFC 9110 §14.1).
        guard text[..<equals].trimmingCharacters(where: isWhitespace).lowercased() == "bytes" else { return nil }
        // A list may contain empty elements (RFC 9110 §5.6.1): `bytes=0-9,` is still one range.
        let ranges = text[text.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(where: isWhitespace) }.filter { !$0.isEmpty }
        guard ranges.count == 1, let range = ranges.first, let dash = range.firstIndex(of: "-") else { return nil }
        let firstText = range[..<dash].trimmingCharacters(where: isWhitespace)
        let lastText = range[range.index(after: dash)...].trimmingCharacters(where: isWhitespace)
        if firstText.isEmpty {
            return parseNumber(lastText).map(Spec.suffix)
        }
        guard let first = parseNumber(firstText) else { return nil }
        if lastText.isEmpty { return .from(first, nil) }
        guard let last = parseNumber(lastText), first <= last else { return nil }
        return .from(first, last)
    }

    /// 1*DIGIT; values past Int64 saturate, since a huge first-pos is still valid syntax (and unsatisfiable).
    private static func parseNumber(_ text: Substring) -> Int64? {
        guard !text.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            value = overflowA || overflowB ? .max : sum
        }
        return value
    }

    private static func isWhitespace(_ character: Character) -> Bool { character == " " || character == "\t" }
}

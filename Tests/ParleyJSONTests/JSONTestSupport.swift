import ParleyJSON
import Testing

/// The UTF-8 bytes of `text`.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A number with exactly this text (the literal forms would normalize it).
func number(_ text: String) -> JSONValue {
    guard let number = JSONNumber(text: text) else { preconditionFailure("invalid number text \(text)") }
    return .number(number)
}

/// The error `parse` throws for `input`, or nil when it accepts it.
func parseError(_ input: [UInt8], maxDepth: Int = JSONValue.defaultMaxDepth) -> JSONParseError? {
    do {
        _ = try JSONValue.parse(input, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator, so the fuzz and property
/// tests see the same inputs on every run and a failure can be replayed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { self.state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

import Testing

/// NIO's `ByteToMessageDecoderVerifier` idea for Parley's pure parsers (HTTP, WebSocket frames, multipart): a
/// parser must give the same outcome however its input is cut into reads. `verify` decodes the input whole, then
/// one byte at a time, split in two at every boundary (at a stride past `exhaustiveLimit` bytes), and at seeded
/// random cut points, and records an issue for the first feeding whose outcome differs from the whole input's.
public enum DecoderVerifier {
    /// One way of feeding an input: the sorted offsets at which it is cut into appends.
    public struct Feeding: Sendable, CustomStringConvertible {
        public let name: String
        public let cuts: [Int]
        public var description: String { name }
    }

    /// Every feeding of an input of `count` bytes other than whole.
    public static func feedings(count: Int, exhaustiveLimit: Int = .max, randomTrials: Int = 8) -> [Feeding] {
        guard count > 1 else { return [] }
        var result = [Feeding(name: "one byte at a time", cuts: Array(1..<count))]
        let step = count <= exhaustiveLimit ? 1 : max(1, count / 512)
        for cut in stride(from: 1, to: count, by: step) { result.append(Feeding(name: "split at \(cut)", cuts: [cut])) }
        // Seeded by the length: a failure names its cuts and reproduces on the next run.
        var random = SplitMix64(seed: 0x5EED_0000 &+ UInt64(count))
        for trial in 0..<randomTrials {
            let cutCount = Int.random(in: 1...min(12, count - 1), using: &random)
            let cuts = Set((0..<cutCount).map { _ in Int.random(in: 1..<count, using: &random) }).sorted()
            result.append(Feeding(name: "random trial \(trial) \(cuts)", cuts: cuts))
        }
        return result
    }

    /// The chunks an input is cut into at `cuts`.
    public static func chunks(of input: [UInt8], cuts: [Int]) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        var start = 0
        for cut in cuts + [input.count] where cut >= start {
            result.append(input[start..<cut])
            start = cut
        }
        return result
    }

    /// Decodes `input` under every feeding (`decode` gets the cut offsets; `[]` is the whole input) and records an
    /// issue if any outcome differs from the whole input's. Returns the whole input's outcome.
    @discardableResult
    public static func verify<Outcome: Equatable>(
        _ input: [UInt8], exhaustiveLimit: Int = .max, randomTrials: Int = 8,
        sourceLocation: SourceLocation = #_sourceLocation, decode: (_ cuts: [Int]) -> Outcome
    ) -> Outcome {
        let reference = decode([])
        for feeding in feedings(count: input.count, exhaustiveLimit: exhaustiveLimit, randomTrials: randomTrials) {
            let outcome = decode(feeding.cuts)
            if outcome != reference {
                Issue.record(
                    "feeding \(feeding) gave \(outcome), whole input gave \(reference)",
                    sourceLocation: sourceLocation)
                break
            }
        }
        return reference
    }
}

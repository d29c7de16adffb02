import ParleyJSON
import ParleyTestSupport
import Testing

@Suite("Mutation fuzzing")
struct JSONFuzzTests {
    /// Bytes that steer mutations towards the parser's decisions rather than plain text.
    static let interestingBytes: [UInt8] =
        Array("{}[],:\"\\ \t\n0123456789-+.eEtfnulx/".utf8)
        + [0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]

    static var seeds: [[UInt8]] {
        acceptCorpus.map(\.input) + JSONRoundTripTests.compactDocuments.map { Array($0.utf8) } + [
            Array("{\"a\":[1,{\"b\":\"\\uD83D\\uDE00\"},-2.5e10],\"c\":{\"d\":null,\"e\":\"caf\u{E9}\"}}".utf8),
            Array(("{" + (0..<20).map { "\"k\($0)\":[\($0)]" }.joined(separator: ",") + "}").utf8),
            Array((String(repeating: "[", count: 62) + "\"\\n\"" + String(repeating: "]", count: 62)).utf8),
        ]
    }

    /// 20,000 mutated documents: the parser must never crash, must report an offset inside the
    /// input, and whatever it accepts must serialize to a document it accepts again with an equal
    /// value and identical bytes.
    @Test func mutatedDocumentsNeverCrashAndAcceptedOnesRoundTrip() throws {
        var random = SplitMix64(seed: 0x9A71_E750_15ED)
        let seeds = Self.seeds
        var accepted = 0
        for iteration in 0..<20_000 {
            var input = seeds[Int(random.next() % UInt64(seeds.count))]
            for _ in 0...Int(random.next() % 4) { mutate(&input, using: &random) }
            do {
                let value = try JSONValue.parse(input)
                accepted += 1
                let written = value.serialized()
                let reparsed = try JSONValue.parse(written)
                #expect(reparsed == value, "iteration \(iteration): \(input)")
                #expect(reparsed.serialized() == written, "iteration \(iteration): \(input)")
            } catch {
                #expect((0...input.count).contains(error.offset), "iteration \(iteration): \(input)")
                #expect(!error.reason.isEmpty)
            }
        }
        // Mutations this light leave a share of documents valid; if none were, the round-trip
        // half of the test would be silently idle.
        #expect(accepted > 1_000)
    }

    private func mutate(_ input: inout [UInt8], using random: inout SplitMix64) {
        let position = input.isEmpty ? 0 : Int(random.next() % UInt64(input.count))
        switch random.next() % 6 {
        case 0 where !input.isEmpty:
            input[position] ^= 1 << UInt8(random.next() % 8)
        case 1 where !input.isEmpty:
            input[position] = Self.interestingBytes[Int(random.next() % UInt64(Self.interestingBytes.count))]
        case 2:
            input.insert(
                Self.interestingBytes[Int(random.next() % UInt64(Self.interestingBytes.count))],
                at: input.isEmpty ? 0 : position)
        case 3 where !input.isEmpty:
            input.remove(at: position)
        case 4 where !input.isEmpty:
            // Duplicate a short run, which repeats keys, commas and brackets.
            let length = min(Int(random.next() % 8) + 1, input.count - position)
            input.insert(contentsOf: input[position..<position + length], at: position)
        case 5 where !input.isEmpty:
            input.removeSubrange(position...)
        default:
            break
        }
    }
}

import ParleyJSON
import Testing

@Suite("Nesting limit")
struct JSONDepthTests {
    private func nestedArrays(_ depth: Int) -> [UInt8] {
        Array(repeating: UInt8(ascii: "["), count: depth) + Array(repeating: UInt8(ascii: "]"), count: depth)
    }

    private func nestedObjects(_ depth: Int) -> [UInt8] {
        Array((String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)).utf8)
    }

    @Test func depth64IsAcceptedByDefault() throws {
        var value = try JSONValue.parse(nestedArrays(64))
        var depth = 0
        while case .array(let elements) = value {
            depth += 1
            guard let first = elements.first else { break }
            value = first
        }
        #expect(depth == 64)
    }

    @Test func depth65IsRejectedAtTheOpeningBracket() {
        #expect(parseError(nestedArrays(65)) == JSONParseError(offset: 64, reason: "nesting deeper than 64"))
    }

    @Test func objectsCountTowardsDepth() throws {
        _ = try JSONValue.parse(nestedObjects(64))
        #expect(parseError(nestedObjects(65)) == JSONParseError(offset: 64 * 5, reason: "nesting deeper than 64"))
    }

    @Test func mixedNestingCountsEveryContainer() throws {
        let mixed = String(repeating: "[{\"k\":", count: 32) + "0" + String(repeating: "}]", count: 32)
        _ = try JSONValue.parse(mixed)
        #expect(parseError(Array(("[" + mixed + "]").utf8))?.reason == "nesting deeper than 64")
    }

    @Test func customLimitIsExact() throws {
        _ = try JSONValue.parse(nestedArrays(3), maxDepth: 3)
        #expect(parseError(nestedArrays(4), maxDepth: 3) == JSONParseError(offset: 3, reason: "nesting deeper than 3"))
        _ = try JSONValue.parse(nestedArrays(200), maxDepth: 200)
    }

    @Test func zeroDepthAllowsOnlyScalars() throws {
        #expect(try JSONValue.parse("1", maxDepth: 0) == 1)
        #expect(parseError(bytes("[]"), maxDepth: 0)?.reason == "nesting deeper than 0")
        #expect(parseError(bytes("{}"), maxDepth: 0)?.reason == "nesting deeper than 0")
    }

    @Test func siblingsDoNotAddDepth() throws {
        let wide =
            "["
            + Array(
                repeating: String(repeating: "[", count: 63) + String(repeating: "]", count: 63),
                count: 100
            ).joined(separator: ",") + "]"
        #expect(try JSONValue.parse(wide).arrayValue?.count == 100)
    }

    @Test func megabyteOfOpenBracketsFailsCleanly() {
        let input = [UInt8](repeating: UInt8(ascii: "["), count: 1 << 20)
        #expect(parseError(input) == JSONParseError(offset: 64, reason: "nesting deeper than 64"))
    }

    @Test func megabyteOfOpenBracketsWithoutALimitDoesNotRecurse() {
        // The parser keeps open containers on the heap, so even an unbounded limit cannot blow the
        // thread's stack; the document just ends too early.
        let input = [UInt8](repeating: UInt8(ascii: "["), count: 1 << 20)
        #expect(parseError(input, maxDepth: .max) == JSONParseError(offset: 1 << 20, reason: "unexpected end of input"))
    }

    @Test func megabyteOfOpenObjectsFailsCleanly() {
        let input = Array(String(repeating: "{\"a\":", count: (1 << 20) / 5).utf8)
        #expect(parseError(input) == JSONParseError(offset: 64 * 5, reason: "nesting deeper than 64"))
    }
}

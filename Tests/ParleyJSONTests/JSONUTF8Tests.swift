import ParleyJSON
import ParleyTestSupport
import Testing

@Suite("UTF-8 validation")
struct JSONUTF8Tests {
    private func quoted(_ raw: [UInt8]) -> [UInt8] { [0x22] + raw + [0x22] }

    @Test func rejectsOverlongsSurrogatesAndOutOfRange() {
        let invalid: [[UInt8]] = [
            [0xC0, 0xAF], [0xC1, 0x81], [0xE0, 0x80, 0xAF], [0xE0, 0x9F, 0xBF], [0xF0, 0x80, 0x80, 0xAF],
            [0xF0, 0x8F, 0xBF, 0xBF], [0xED, 0xA0, 0x80], [0xED, 0xAF, 0xBF], [0xED, 0xB0, 0x80], [0xED, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF7, 0xBF, 0xBF, 0xBF],
            [0xF8, 0x88, 0x80, 0x80, 0x80],
            [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80], [0xFE], [0xFF], [0x80], [0xBF], [0xC2], [0xC2, 0x41],
            [0xE2, 0x82], [0xE2, 0x82, 0x41], [0xF0, 0x9F, 0x98], [0xF0, 0x9F, 0x98, 0x41], [0xC2, 0xC2, 0xA0],
        ]
        for raw in invalid {
            let error = parseError(quoted(raw))
            #expect(error == JSONParseError(offset: 1, reason: "invalid UTF-8"), "\(raw)")
        }
    }

    @Test func acceptsEveryScalarEncodedRaw() throws {
        // Every boundary of Table 3-7, plus a sample across each range.
        let scalars: [UInt32] = [
            0x7F, 0x80, 0x7FF, 0x800, 0xFFF, 0x1000, 0xCFFF, 0xD000, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF,
            0x10000, 0x3FFFF, 0x40000, 0xFFFFF, 0x100000, 0x10FFFF, 0x1F600, 0x2028, 0x2029,
        ]
        for code in scalars {
            let string = String(Unicode.Scalar(code)!)
            #expect(try JSONValue.parse(quoted(Array(string.utf8))) == .string(string), "U+\(String(code, radix: 16))")
        }
    }

    @Test func offsetPointsAtTheBadSequence() {
        let input: [UInt8] = Array("{\"name\":\"caf".utf8) + [0xC3, 0xA9, 0xED, 0xA0, 0x80] + Array("\"}".utf8)
        #expect(parseError(input) == JSONParseError(offset: 14, reason: "invalid UTF-8"))
    }

    @Test func invalidUTF8OutsideStringsIsUnexpected() {
        #expect(parseError([0xC3, 0xA9]) == JSONParseError(offset: 0, reason: "unexpected character"))
        #expect(parseError([0x5B, 0xFF, 0x5D]) == JSONParseError(offset: 1, reason: "unexpected character"))
    }

    @Test func agreesWithTheStandardLibraryOnRandomBytes() {
        // Any byte string is either valid UTF-8 for both the parser and String(validating:), or for
        // neither; controls, quotes and backslashes are kept out so only UTF-8 decides.
        var random = SplitMix64(seed: 0x0_7F8)
        for _ in 0..<20_000 {
            let length = Int(random.next() % 6) + 1
            let raw: [UInt8] = (0..<length).map { _ in
                let byte = UInt8(truncatingIfNeeded: random.next())
                return byte < 0x20 || byte == 0x22 || byte == 0x5C ? 0x41 : byte
            }
            let accepted = parseError(quoted(raw)) == nil
            let valid = String(validating: raw, as: UTF8.self) != nil
            #expect(accepted == valid, "\(raw)")
        }
    }
}

import ParleyJSON
import Testing

@Suite("String escapes")
struct JSONStringTests {
    @Test(
        arguments: [
            ("\"\\\"\"", "\""), ("\"\\\\\"", "\\"), ("\"\\/\"", "/"), ("\"\\b\"", "\u{8}"), ("\"\\f\"", "\u{C}"),
            ("\"\\n\"", "\n"), ("\"\\r\"", "\r"), ("\"\\t\"", "\t"), ("\"\\u0041\"", "A"), ("\"\\u00e9\"", "\u{E9}"),
            ("\"\\u00E9\"", "\u{E9}"), ("\"\\u20AC\"", "\u{20AC}"), ("\"\\uD83D\\uDE00\"", "\u{1F600}"),
            ("\"\\ud834\\udd1e\"", "\u{1D11E}"), ("\"\\uDBFF\\uDFFF\"", "\u{10FFFF}"),
            ("\"\\uD800\\uDC00\"", "\u{10000}"),
            ("\"a\\u0000b\"", "a\u{0}b"), ("\"x\\ty\\nz\"", "x\ty\nz"), ("\"\\u002F\"", "/"),
        ] as [(String, String)])
    func decodesEscapes(_ input: String, _ expected: String) throws {
        #expect(try JSONValue.parse(input) == .string(expected))
    }

    @Test(
        arguments: [
            ("\"\\uD800\"", "unpaired surrogate"), ("\"\\uDFFF\"", "unpaired surrogate"),
            ("\"\\uDC00\\uD800\"", "unpaired surrogate"), ("\"\\uD800\\n\"", "unpaired surrogate"),
            ("\"\\uD800\\uE000\"", "unpaired surrogate"), ("\"\\uD800\\u12\"", "invalid \\u escape"),
            ("\"\\u12\"", "invalid \\u escape"), ("\"\\u+123\"", "invalid \\u escape"),
            ("\"\\u 123\"", "invalid \\u escape"),
            ("\"\\a\"", "invalid escape"), ("\"\\0\"", "invalid escape"), ("\"\\ \"", "invalid escape"),
            ("\"\\", "unterminated string"), ("\"abc\\\"", "unterminated string"),
        ] as [(String, String)])
    func rejectsBadEscapes(_ input: String, _ reason: String) {
        #expect(parseError(bytes(input))?.reason == reason)
    }

    @Test func escapedAndUnescapedFormsAreEqual() throws {
        #expect(try JSONValue.parse("\"\\u00e9t\\u00e9\"") == JSONValue.parse("\"\u{E9}t\u{E9}\""))
        #expect(try JSONValue.parse("{\"\\u0061\":1}") == ["a": 1])
    }

    @Test func everyControlCharacterMustBeEscaped() {
        for byte: UInt8 in 0..<0x20 {
            #expect(parseError([0x22, byte, 0x22])?.reason == "unescaped control character in string")
        }
    }

    @Test func everyBMPScalarDecodesFromItsEscape() throws {
        for code in UInt32(0)...0xFFFF where !(0xD800...0xDFFF).contains(code) {
            let hex = String(code, radix: 16)
            let escaped = "\"\\u" + String(repeating: "0", count: 4 - hex.count) + hex + "\""
            let expected = String(Unicode.Scalar(code)!)
            guard try JSONValue.parse(escaped) == .string(expected) else {
                Issue.record("U+\(hex) decoded wrongly")
                return
            }
        }
    }
}

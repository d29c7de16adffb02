import ParleyJSON
import Testing

@Suite("Writer")
struct JSONWriterTests {
    private func written(_ string: String) -> String {
        var out: [UInt8] = []
        JSONString.append(string, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func escapesOnlyWhatRFC8259Requires() {
        #expect(written("") == "\"\"")
        #expect(written("plain") == "\"plain\"")
        #expect(written("a\"b\\c") == "\"a\\\"b\\\\c\"")
        #expect(written("\u{8}\u{C}\n\r\t") == "\"\\b\\f\\n\\r\\t\"")
        #expect(written("\u{0}\u{1}\u{1A}\u{1F}") == "\"\\u0000\\u0001\\u001a\\u001f\"")
        #expect(written("a/b") == "\"a/b\"")
        #expect(written("\u{7F}") == "\"\u{7F}\"")
        #expect(written("caf\u{E9} \u{1F600} \u{2028}\u{2029}") == "\"caf\u{E9} \u{1F600} \u{2028}\u{2029}\"")
    }

    @Test func everyControlCharacterUsesAnEscape() throws {
        for code in UInt32(0)..<0x20 {
            let string = String(Unicode.Scalar(code)!)
            let text = written(string)
            #expect(!text.utf8.contains { $0 < 0x20 })
            #expect(try JSONValue.parse(text) == .string(string))
        }
    }

    @Test func appendsAfterExistingBytes() {
        var out = Array("{\"k\":".utf8)
        JSONString.append("v\n", to: &out)
        out.append(UInt8(ascii: "}"))
        #expect(String(decoding: out, as: UTF8.self) == "{\"k\":\"v\\n\"}")
    }

    @Test func slicedStringsWriteOnlyTheirOwnBytes() {
        let long = String(repeating: "abc\"", count: 50)
        let sliced = String(long.dropFirst(4))
        #expect(written(sliced) == "\"" + String(repeating: "abc\\\"", count: 49) + "\"")
    }

    @Test func compactSerializationOfEveryKind() {
        let value: JSONValue = ["n": nil, "t": true, "f": false, "i": -5, "d": 0.5, "s": "x", "a": [], "o": [:]]
        #expect(
            value.serializedString
                == "{\"n\":null,\"t\":true,\"f\":false,\"i\":-5,\"d\":0.5,\"s\":\"x\",\"a\":[],\"o\":{}}")
        #expect(value.description == value.serializedString)
        #expect(value.serialized() == Array(value.serializedString.utf8))
    }

    @Test func nonFiniteFloatLiteralBecomesNull() {
        let value = JSONValue(floatLiteral: .infinity)
        #expect(value == .null)
    }
}

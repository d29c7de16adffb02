import ParleyJSON
import Testing

@Suite("Round trips")
struct JSONRoundTripTests {
    /// Compact documents the writer reproduces byte for byte.
    static let compactDocuments = [
        "null", "true", "false", "0", "-0", "12345678901234567890", "1.5e-7", "1E+2", "\"\"", "\"plain\"",
        "[]", "{}", "[1,2,3]", "[[[]]]", "{\"a\":{\"b\":{\"c\":[null]}}}",
        "{\"z\":1,\"a\":2,\"m\":3}",
        "{\"id\":9223372036854775807,\"size\":18446744073709551615,\"ratio\":0.30000000000000004}",
        "\"caf\u{E9} \u{1F600} \u{2028} / \u{7F}\"",
        "\"quote\\\" backslash\\\\ nl\\n cr\\r tab\\t bs\\b ff\\f nul\\u0000 us\\u001f\"",
        "{\"\":\"\",\" \":[\"\\\"\"],\"\\n\":{}}",
        "[{\"type\":\"message\",\"body\":\"hi\",\"attachments\":[{\"name\":\"a.png\",\"bytes\":1048576}],\"edited\":false}]",
    ]

    @Test(arguments: compactDocuments)
    func compactDocumentsReserializeByteForByte(_ text: String) throws {
        let value = try JSONValue.parse(text)
        #expect(value.serializedString == text)
        #expect(try JSONValue.parse(value.serialized()) == value)
    }

    @Test func prettyDocumentsBecomeCompact() throws {
        let pretty = """
            {
              "a" : [ 1 , 2 ],
              "b" : { "c" : "\\u0064\\/" }
            }
            """
        let value = try JSONValue.parse(pretty)
        #expect(value.serializedString == "{\"a\":[1,2],\"b\":{\"c\":\"d/\"}}")
        #expect(try JSONValue.parse(value.serializedString) == value)
    }

    @Test func writeAppendsToExistingBytes() {
        var out = Array("prefix:".utf8)
        JSONValue.array([1, "x"]).write(to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "prefix:[1,\"x\"]")
    }

    @Test func largeObjectRoundTripsInOrder() throws {
        var object = JSONObject()
        for index in (0..<500).reversed() { object["key\(index)"] = .number(JSONNumber(index)) }
        let value = JSONValue.object(object)
        let reparsed = try JSONValue.parse(value.serialized())
        #expect(reparsed == value)
        #expect(reparsed.objectValue?.keys == object.keys)
        #expect(reparsed["key250"] == 250)
    }

    @Test func builtValuesSurviveParsing() throws {
        let values: [JSONValue] = [
            [
                "text": "line\nbreak \u{1}\u{1F} \"q\" \\", "list": [1, 2.5, nil, true, [:]],
                "nested": ["deep": [[["x"]]]],
            ],
            .string(String(repeating: "\u{E9}\u{1F600}a", count: 1000)),
            .array((0..<1000).map { .number(JSONNumber($0)) }),
        ]
        for value in values {
            #expect(try JSONValue.parse(value.serialized()) == value)
        }
    }
}

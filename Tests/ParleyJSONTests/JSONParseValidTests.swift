import ParleyJSON
import Testing

@Suite("Parsing valid documents")
struct JSONParseValidTests {
    @Test func scalarsAtTopLevel() throws {
        #expect(try JSONValue.parse("null") == .null)
        #expect(try JSONValue.parse("true") == .bool(true))
        #expect(try JSONValue.parse("false") == .bool(false))
        #expect(try JSONValue.parse("0") == number("0"))
        #expect(try JSONValue.parse("-12.5e-3") == number("-12.5e-3"))
        #expect(try JSONValue.parse("\"hi\"") == .string("hi"))
        #expect(try JSONValue.parse("\"\"") == .string(""))
    }

    @Test func emptyContainers() throws {
        #expect(try JSONValue.parse("[]") == .array([]))
        #expect(try JSONValue.parse("{}") == .object(JSONObject()))
        #expect(try JSONValue.parse("[[],{}]") == [[], [:]])
        #expect(try JSONValue.parse("{\"a\":{},\"b\":[]}") == ["a": [:], "b": []])
    }

    @Test func mixedDocument() throws {
        let text = """
            {
              "id": 9007199254740993,
              "name": "Ada \\u2014 L\u{F6}velace",
              "admin": false,
              "score": 12.75,
              "tags": ["math", "engines", null],
              "profile": {"city": "London", "born": 1815}
            }
            """
        let value = try JSONValue.parse(text)
        #expect(value["id"]?.int64Value == 9_007_199_254_740_993)
        #expect(value["name"]?.stringValue == "Ada \u{2014} L\u{F6}velace")
        #expect(value["admin"]?.boolValue == false)
        #expect(value["score"]?.doubleValue == 12.75)
        #expect(value["tags"]?.arrayValue == ["math", "engines", nil])
        #expect(value["tags"]?[2]?.isNull == true)
        #expect(value["profile"]?["born"]?.int64Value == 1815)
        #expect(value["profile"]?.objectValue?.keys == ["city", "born"])
        #expect(value.objectValue?.keys == ["id", "name", "admin", "score", "tags", "profile"])
        #expect(value["missing"] == nil)
    }

    @Test func allWhitespaceKindsBetweenTokens() throws {
        let value = try JSONValue.parse(" \t\r\n{ \"a\" \n:\t[ 1 ,\r\n2 ] } \n")
        #expect(value == ["a": [1, 2]])
    }

    @Test func threeEntryPointsAgree() throws {
        let text = "{\"k\":[1,\"\u{E9}\",true]}"
        let fromString = try JSONValue.parse(text)
        let fromArray = try JSONValue.parse(Array(text.utf8))
        let fromBuffer = try Array(text.utf8).withUnsafeBufferPointer { try JSONValue.parse($0) }
        #expect(fromString == fromArray)
        #expect(fromArray == fromBuffer)
    }

    @Test func accessorsAnswerNilForOtherKinds() {
        let value: JSONValue = "text"
        #expect(value.stringValue == "text")
        #expect(value.boolValue == nil)
        #expect(value.numberValue == nil)
        #expect(value.int64Value == nil)
        #expect(value.doubleValue == nil)
        #expect(value.arrayValue == nil)
        #expect(value.objectValue == nil)
        #expect(value["key"] == nil)
        #expect(value[0] == nil)
        #expect(!value.isNull)
        let array: JSONValue = [1, 2]
        #expect(array[1] == 2)
        #expect(array[2] == nil)
        #expect(array[-1] == nil)
    }

    @Test func literalsBuildTheExpectedCases() {
        let value: JSONValue = ["n": nil, "b": true, "i": 42, "d": 1.5, "s": "x", "a": [1, "two"], "o": ["k": 0]]
        #expect(value["n"] == .null)
        #expect(value["b"] == .bool(true))
        #expect(value["i"] == .number(JSONNumber(42)))
        #expect(value["d"] == .number(JSONNumber(1.5)!))
        #expect(value["s"] == .string("x"))
        #expect(value["a"] == .array([.number(JSONNumber(1)), .string("two")]))
        #expect(value["o"]?["k"]?.int64Value == 0)
        #expect(value.objectValue?.keys == ["n", "b", "i", "d", "s", "a", "o"])
    }

    @Test func errorDescriptionNamesOffsetAndReason() {
        let error = JSONParseError(offset: 3, reason: "unexpected character")
        #expect(error.description == "invalid JSON at byte 3: unexpected character")
    }
}

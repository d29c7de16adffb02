import ParleyJSON
import Testing

@Suite("Ordered objects")
struct JSONObjectTests {
    @Test func keepsInputOrder() throws {
        let object = try #require(try JSONValue.parse("{\"b\":1,\"a\":2,\"c\":3}").objectValue)
        #expect(object.keys == ["b", "a", "c"])
        #expect(object.map(\.key) == ["b", "a", "c"])
        #expect(object.map(\.value) == [1, 2, 3])
        #expect(object.count == 3)
        #expect(!object.isEmpty)
        #expect(object[1].key == "a")
        #expect(object[1].value == 2)
    }

    @Test func subscriptSetAppendsReplacesAndRemoves() {
        var object = JSONObject()
        #expect(object.isEmpty)
        object["x"] = 1
        object["y"] = 2
        object["x"] = "replaced"
        #expect(object.keys == ["x", "y"])
        #expect(object["x"] == "replaced")
        object["x"] = nil
        #expect(object.keys == ["y"])
        #expect(object["x"] == nil)
        object["missing"] = nil
        #expect(object.count == 1)
    }

    @Test func pairsInitializerLetsLaterDuplicatesWin() {
        let object = JSONObject([("a", 1), ("b", 2), ("a", 3)])
        #expect(object.keys == ["a", "b"])
        #expect(object["a"] == 3)
        let literal: JSONValue = ["a": 1, "a": 2]
        #expect(literal["a"] == 2)
    }

    @Test func largeObjectsStayConsistentThroughEdits() {
        var object = JSONObject()
        for index in 0..<100 { object["k\(index)"] = .number(JSONNumber(index)) }
        for index in stride(from: 0, to: 100, by: 3) { object["k\(index)"] = nil }
        object["k1"] = "one"
        object["new"] = true
        var expectedKeys = (0..<100).filter { $0 % 3 != 0 }.map { "k\($0)" }
        expectedKeys.append("new")
        #expect(object.keys == expectedKeys)
        #expect(object["k1"] == "one")
        #expect(object["k3"] == nil)
        #expect(object["k98"] == 98)
        #expect(object["new"] == true)
        #expect(object.position(of: "new") == expectedKeys.count - 1)
        // Shrinking below the index threshold keeps lookups right.
        for key in expectedKeys.dropFirst(5) { object[key] = nil }
        #expect(object.keys == Array(expectedKeys.prefix(5)))
        #expect(object["k2"] == 2)
    }

    @Test func equalityAndHashIgnoreOrder() {
        let first = JSONObject([("a", 1), ("b", [true])])
        let second = JSONObject([("b", [true]), ("a", 1)])
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(Set([JSONValue.object(first), .object(second)]).count == 1)
        #expect(first != JSONObject([("a", 1)]))
        #expect(first != JSONObject([("a", 1), ("b", [false])]))
        #expect(first != JSONObject([("a", 1), ("c", [true])]))
    }

    @Test func parsedLargeObjectLooksUpEveryKey() throws {
        let text = "{" + (0..<300).map { "\"key\($0)\":\($0)" }.joined(separator: ",") + "}"
        let object = try #require(try JSONValue.parse(text).objectValue)
        for index in 0..<300 { #expect(object["key\(index)"]?.int64Value == Int64(index)) }
        #expect(object["key300"] == nil)
    }

    @Test func duplicateKeyReasonIsShortAndEscaped() {
        let long = String(repeating: "x", count: 100)
        let error = parseError(bytes("{\"\(long)\":1,\"\(long)\":2}"))
        #expect(error?.reason == "duplicate key `\(String(repeating: "x", count: 32))...`")
        let control = parseError(bytes("{\"a\\nb\":1,\"a\\nb\":2}"))
        #expect(control?.reason == "duplicate key `a\\nb`")
    }

    @Test func canonicallyEquivalentKeysAreOneKey() {
        // Swift compares strings by canonical equivalence, so these would collide in the object.
        #expect(parseError(bytes("{\"\u{E9}\":1,\"e\u{301}\":2}"))?.reason.hasPrefix("duplicate key") == true)
    }
}

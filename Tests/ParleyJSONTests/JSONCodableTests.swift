import Foundation
import ParleyJSON
import Testing

@Suite("Codable interop with Foundation")
struct JSONCodableTests {
    struct Envelope: Codable, Equatable {
        var id: Int
        var kind: String
        var payload: JSONValue
        var extra: JSONValue?
    }

    @Test func valueInsideAFoundationCodedStruct() throws {
        let payload: JSONValue = [
            "text": "hi \u{1F600}", "count": 3, "ratio": 0.25, "flags": [true, false, nil],
            "nested": ["big": number("12345678901234567890"), "neg": -7],
        ]
        let envelope = Envelope(id: 7, kind: "message", payload: payload, extra: nil)
        let data = try JSONEncoder().encode(envelope)

        // What Foundation wrote is valid JSON for our parser, with the same payload.
        let parsed = try JSONValue.parse(Array(data))
        #expect(parsed["payload"] == payload)
        #expect(parsed["id"] == 7)

        let decoded = try JSONDecoder().decode(Envelope.self, from: data)
        #expect(decoded == envelope)
        #expect(decoded.payload["nested"]?["big"]?.numberValue?.text == "12345678901234567890")
    }

    @Test func decodingPicksTheNarrowestKind() throws {
        let data = Data(
            """
            {"id":1,"kind":"k","payload":[null,true,false,1,-1,2.5,"s",[],{},9223372036854775807,1e300]}
            """.utf8)
        let payload = try JSONDecoder().decode(Envelope.self, from: data).payload
        let elements = try #require(payload.arrayValue)
        #expect(elements[0] == .null)
        #expect(elements[1] == .bool(true))
        #expect(elements[2] == .bool(false))
        #expect(elements[3] == 1)
        #expect(elements[4] == -1)
        #expect(elements[5] == 2.5)
        #expect(elements[6] == "s")
        #expect(elements[7] == [])
        #expect(elements[8] == [:])
        #expect(elements[9].int64Value == .max)
        #expect(elements[10].doubleValue == 1e300)
    }

    @Test func decodedObjectKeysAreSorted() throws {
        let data = Data("{\"id\":1,\"kind\":\"k\",\"payload\":{\"zeta\":1,\"alpha\":2,\"mid\":{\"y\":0,\"b\":0}}}".utf8)
        let payload = try JSONDecoder().decode(Envelope.self, from: data).payload
        #expect(payload.objectValue?.keys == ["alpha", "mid", "zeta"])
        #expect(payload["mid"]?.objectValue?.keys == ["b", "y"])
    }

    @Test func optionalValueDistinguishesAbsentFromNull() throws {
        let absent = try JSONDecoder().decode(Envelope.self, from: Data("{\"id\":1,\"kind\":\"k\",\"payload\":1}".utf8))
        #expect(absent.extra == nil)
        let null = try JSONDecoder().decode(
            Envelope.self, from: Data("{\"id\":1,\"kind\":\"k\",\"payload\":null,\"extra\":[1]}".utf8))
        #expect(null.payload == .null)
        #expect(null.extra == [1])
    }

    @Test func encodingWritesIntegersExactly() throws {
        let value: JSONValue = [number("9223372036854775807"), number("-9223372036854775808"), number("1e2"), 0.5]
        let data = try JSONEncoder().encode(value)
        let parsed = try JSONValue.parse(Array(data))
        #expect(parsed[0]?.int64Value == .max)
        #expect(parsed[1]?.int64Value == .min)
        #expect(parsed[2]?.numberValue?.text == "100")
        #expect(parsed[3]?.doubleValue == 0.5)
    }

    @Test func encodedObjectKeepsEveryMember() throws {
        let value: JSONValue = ["b": 1, "a": ["c": "d"], "": nil]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONValue.parse(Array(data)) == value)
        let sorted = JSONEncoder()
        sorted.outputFormatting = .sortedKeys
        #expect(String(decoding: try sorted.encode(value), as: UTF8.self) == "{\"\":null,\"a\":{\"c\":\"d\"},\"b\":1}")
    }
}

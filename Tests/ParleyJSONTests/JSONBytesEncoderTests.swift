import Foundation
import ParleyJSON
import ParleyTestSupport
import Testing

/// Differential tests: `JSONBytesEncoder` must write exactly the bytes of a `JSONEncoder` configured like
/// ParleyHTTP's `JSONCoding.encoder` (sorted keys, unescaped slashes, dates as a custom string).
@Suite("JSONBytesEncoder")
struct JSONBytesEncoderTests {
    /// A date text independent of ParleyHTTP's ISO8601 (tests here cannot see it); any string does for equality.
    private static func dateText(_ date: Date) -> String { "T\(date.timeIntervalSince1970)" }

    private static let foundation: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(dateText(date))
        }
        return encoder
    }()

    private static let ours = JSONBytesEncoder(dateWriter: { date, out in JSONString.append(dateText(date), to: &out) })

    private func expectSame<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = try? Array(Self.foundation.encode(value))
        let actual = try? Self.ours.encode(value)
        #expect(
            actual.map { String(decoding: $0, as: UTF8.self) } == expected.map { String(decoding: $0, as: UTF8.self) },
            sourceLocation: sourceLocation)
        #expect(actual == expected, sourceLocation: sourceLocation)
    }

    // MARK: Scalars

    @Test func integersOfEveryWidth() {
        expectSame([Int.min, -1, 0, 1, Int.max])
        expectSame([Int8.min, Int8.max])
        expectSame([Int16.min, Int16.max])
        expectSame([Int32.min, Int32.max])
        expectSame([Int64.min, Int64.max])
        expectSame([UInt.min, UInt.max])
        expectSame([UInt8.max])
        expectSame([UInt16.max])
        expectSame([UInt32.max])
        expectSame([UInt64.min, UInt64.max, UInt64(Int.max), UInt64(Int.max) + 1])
        expectSame([Int128.min, Int128.max])
        expectSame([UInt128.max])
        expectSame(Int.min)
        expectSame(UInt64.max)
        expectSame(AllWidths())
    }

    @Test func floatingPoint() {
        expectSame([
            3.0, 0.1, 1e-7, 1e21, -0.0, 0.0, 1e16, 1e15, 123456789012345678, 5e-324, 1.7976931348623157e308,
            0.5, 100, 1e-5, 1e-4, 0.30000000000000004, -2.5, 9007199254740992, 2.2250738585072014e-308,
        ])
        expectSame([Float(0.1), 3, 1e-7, 16777216, 1e21, -0.0, .greatestFiniteMagnitude, .leastNonzeroMagnitude])
        expectSame(3.0)
        expectSame(Float(0.1))
        expectSame(Floats(d: 1.5, f: 2, od: nil, of: 0.25))
        var rng = SplitMix64(seed: 7)
        var doubles: [Double] = []
        for _ in 0..<300 {
            let d = Double(bitPattern: rng.next())
            if d.isFinite { doubles.append(d) }
            doubles.append(Double(Int64.random(in: -1_000_000...1_000_000, using: &rng)) / 1000)
        }
        expectSame(doubles)
        expectSame(doubles.map { Float($0) }.filter(\.isFinite))
    }

    @Test func nonFiniteFloatsThrowInBoth() {
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) { try Self.foundation.encode(value) }
            #expect(throws: EncodingError.self) { try Self.ours.encode(value) }
            #expect(throws: EncodingError.self) { try Self.ours.encode([value]) }
            #expect(throws: EncodingError.self) { try Self.ours.encode(Floats(d: value, f: 1, od: nil, of: nil)) }
            #expect(throws: EncodingError.self) { try Self.ours.encode(Floats(d: 1, f: 1, od: value, of: nil)) }
            #expect(throws: EncodingError.self) {
                try Self.ours.encode(Floats(d: 1, f: Float(value), od: nil, of: nil))
            }
            #expect(throws: EncodingError.self) { try Self.ours.encode(["k": value]) }
        }
    }

    @Test func failedEncodeLeavesOutputAlone() {
        var out = Array("prefix".utf8)
        #expect(throws: EncodingError.self) { try Self.ours.encode(["a": [1, .nan]], into: &out) }
        #expect(out == Array("prefix".utf8))
    }

    @Test func strings() {
        var all = ""
        for code in UInt32(0)..<0x80 { all.unicodeScalars.append(Unicode.Scalar(code)!) }
        expectSame(all)
        expectSame([
            "", "plain", "a\"b\\c", "a/b", "http://x/y", "\u{7F}", "caf\u{E9}", "\u{1F600}", "\u{2028}\u{2029}",
            "e\u{301}", "\u{FEFF}", "\u{10FFFF}", String(repeating: "long text ", count: 40),
        ])
    }

    @Test func boolsAndNulls() {
        expectSame(true)
        expectSame([true, false])
        expectSame(Int?.none)
        expectSame([1, nil, 3])
        expectSame(ExplicitNil())
    }

    // MARK: Foundation types

    @Test func foundationSpecialCases() throws {
        expectSame(Data())
        expectSame(Data([0, 1, 2, 250, 251, 252, 253, 254, 255]))
        expectSame(["blob": Data((0..<200).map { UInt8($0) })])
        expectSame(try #require(URL(string: "https://example.com/a b?q=1&r=/x#frag")))
        expectSame(try #require(URL(string: "b/c", relativeTo: URL(string: "https://x.com/a/"))))
        expectSame(["u": try #require(URL(string: "file:///tmp/x"))])
        expectSame([
            Decimal(0), Decimal(-1.5), try #require(Decimal(string: "3.14159")),
            try #require(Decimal(string: "12345678901234567890.123")), try #require(Decimal(string: "1e-10")),
            Decimal(string: "-0.000")!, Decimal.greatestFiniteMagnitude,
        ])
        expectSame(Date(timeIntervalSince1970: 1_700_000_000.123))
        expectSame([Date(timeIntervalSince1970: 0), Date(timeIntervalSinceReferenceDate: -5)])
        expectSame(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)
    }

    @Test func defaultDateStrategyIsDeferredToDate() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1234.5)
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let expected = try Array(foundation.encode(["d": date]))
        #expect(try JSONBytesEncoder().encode(["d": date]) == expected)
    }

    // MARK: Keys

    @Test func keyOrderIsUTF8ByteOrder() {
        let keys = [
            "a10", "a2", "B", "a", "_x", "é", "Z1", "z", "A", "b", "aa", "a1", "10", "9", "ä", "Ω", "😀", "~", "",
            "a-b", "a_b", "ab", "aB", "Ab", "AB", "f", "ﬀ", "\u{7F}", "\u{1}", "\"", "\\", "a\u{0}",
        ]
        var dictionary: [String: Int] = [:]
        for (index, key) in keys.enumerated() { dictionary[key] = index }
        expectSame(dictionary)
        expectSame(Keyed(keys: keys))
        expectSame(Keyed(keys: keys.reversed()))
        // Canonically equivalent spellings are one key: the first spelling, the last value.
        expectSame(Keyed(keys: ["e\u{301}b", "\u{E9}a", "e\u{301}", "\u{E9}", "\u{212B}", "\u{C5}", "A\u{30A}", "B"]))
        expectSame(Keyed(keys: ["b", "a", "b", "c", "a"]))
        expectSame(Keyed(keys: ["a", "a"]))
    }

    @Test func dictionaries() {
        expectSame([String: Int]())
        expectSame(["b": 2, "a": 1, "c": 3])
        expectSame([1: "a", 10: "b", 2: "c", -5: "d"])
        expectSame([true: 1])
        expectSame([Float(1.5): "x"])
        expectSame(["outer": ["inner": [1, 2], "empty": []]])
        expectSame([Suit.hearts: 1, Suit.spades: 2])
    }

    // MARK: Structure

    @Test func nestedAndEmptyContainers() {
        expectSame([Int]())
        expectSame([[Int]]())
        expectSame([[], [1], [[2]]] as [[AnyEncodable]])
        expectSame(Outer.sample)
        expectSame([Outer.sample, Outer(id: 2, name: nil, inner: Inner(values: [], flag: false), tags: [:], when: nil)])
        expectSame(WrapsEmpty())
        expectSame([EncodesNothing()])
        expectSame(["k": EncodesNothing()])
    }

    @Test func topLevelValueThatEncodesNothingThrowsInBoth() {
        #expect(throws: EncodingError.self) { try Self.foundation.encode(EncodesNothing()) }
        #expect(throws: EncodingError.self) { try Self.ours.encode(EncodesNothing()) }
    }

    @Test func customEncodeImplementations() {
        expectSame(NestedCustom())
        expectSame(SuperEncoders())
        expectSame(UnkeyedSuper())
        expectSame(ReusedContainers())
        expectSame(DuplicateKeys())
        expectSame(ScalarOverwritesContainer())
        expectSame(SingleValueWrapper(inner: Outer.sample))
        expectSame(CodingPathRecorder())
    }

    @Test func enums() {
        expectSame([Suit.hearts, .spades])
        expectSame([Level.low, .high])
        expectSame([
            Shape.circle(radius: 2), .rect(w: 1, h: 2), .point, .labeled("x", 3),
            .nested(Inner(values: [1], flag: true)),
        ])
    }

    @Test func classInheritance() {
        expectSame(Derived(base: 1, derived: "d"))
        expectSame(Derived(base: 1, derived: "d", viaSuperEncoder: true))
        expectSame([Derived(base: 2, derived: "e")])
    }

    @Test func responseShapes() {
        expectSame(Account(aid: 1, abalance: 0))
        expectSame((0..<20).map { MessageLike.sample($0) })
        expectSame(MessagePage(messages: (0..<5).map { MessageLike.sample($0) }, hasMore: true))
    }

    /// The one departure from Foundation: a `JSONValue` is written as it is kept (`write(to:)`), members in their
    /// order and numbers as their text, wherever it sits in a model.
    @Test func jsonValuesAreWrittenAsKept() throws {
        let content = try JSONValue.parse(
            #"{"z":1.50,"a":[12345678901234567890123,1e2,-0.0],"m":{"y":null,"b":"\u00e9/"}}"#)
        let kept = String(decoding: content.serialized(), as: UTF8.self)
        #expect(kept == #"{"z":1.50,"a":[12345678901234567890123,1e2,-0.0],"m":{"y":null,"b":"é/"}}"#)
        struct Holder: Encodable {
            var content: JSONValue
            var extra: JSONValue?
            var list: [JSONValue]
            var map: [String: JSONValue]
        }
        let holder = Holder(content: content, extra: nil, list: [content, .null], map: ["k": content])
        let written = String(decoding: try Self.ours.encode(holder), as: UTF8.self)
        #expect(written == #"{"content":\#(kept),"list":[\#(kept),null],"map":{"k":\#(kept)}}"#)
        #expect(try Self.ours.encode(content) == content.serialized())
    }

    /// Where the kept form is already what Foundation writes (members sorted, numbers in Swift's spelling), the
    /// two still agree byte for byte.
    @Test func canonicalJSONValuesMatchFoundation() throws {
        for text in [
            #"{"a":1,"b":[true,false,null],"c":{"d":"x","e":-2.5}}"#, #"[1,"two",3.25,{"k":[]}]"#, #""s""#, "null",
            #"{"big":9223372036854775807,"f":0.1,"neg":-9223372036854775808}"#,
        ] {
            expectSame(try JSONValue.parse(text))
        }
    }

    @Test func randomValues() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<400 {
            let value = Random.value(depth: 0, using: &rng)
            expectSame(value)
        }
    }
}

// MARK: - Corpus types

private struct AllWidths: Encodable {
    var i = Int.min, i8 = Int8.min, i16 = Int16.max, i32 = Int32.min, i64 = Int64.max
    var u = UInt.max, u8 = UInt8.max, u16 = UInt16.max, u32 = UInt32.max, u64 = UInt64.max
    var i128 = Int128.min, u128 = UInt128.max, b = true, s = "s", d = 0.1, f = Float(0.1)
}

private struct Floats: Encodable {
    var d: Double
    var f: Float
    var od: Double?
    var of: Float?
}

private struct ExplicitNil: Encodable {
    enum CodingKeys: String, CodingKey { case a, b, c }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeNil(forKey: .b)
        try container.encodeIfPresent(Int?.none, forKey: .a)
        try container.encode(Int?.none, forKey: .c)
        var unkeyed = container.superEncoder().unkeyedContainer()
        try unkeyed.encodeNil()
    }
}

private struct DynamicKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

private struct Keyed: Encodable {
    let keys: [String]
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: DynamicKey.self)
        for (index, key) in keys.enumerated() { try container.encode(index, forKey: DynamicKey(key)) }
    }
}

private enum Suit: String, Codable, CodingKeyRepresentable { case hearts, spades }
private enum Level: Int, Codable { case low = 1, high = 10 }

private enum Shape: Encodable {
    case circle(radius: Double)
    case rect(w: Int, h: Int)
    case point
    case labeled(String, Int)
    case nested(Inner)
}

private struct Inner: Encodable {
    var values: [Int]
    var flag: Bool
}

private struct Outer: Encodable {
    var id: Int
    var name: String?
    var inner: Inner
    var tags: [String: String]
    var when: Date?

    static let sample = Outer(
        id: 1, name: "n/a \"q\"", inner: Inner(values: [1, 2, 3], flag: true),
        tags: ["z": "last", "a": "first"], when: Date(timeIntervalSince1970: 1_000))
}

private struct EncodesNothing: Encodable {
    func encode(to encoder: any Encoder) throws {}
}

private struct WrapsEmpty: Encodable {
    var empty = EncodesNothing()
    var x = 1
    var list = [EncodesNothing()]
}

private struct AnyEncodable: Encodable, ExpressibleByIntegerLiteral, ExpressibleByArrayLiteral {
    let encodeBody: @Sendable (any Encoder) throws -> Void
    init(integerLiteral value: Int) { encodeBody = { try value.encode(to: $0) } }
    init(arrayLiteral elements: AnyEncodable...) { encodeBody = { try elements.encode(to: $0) } }
    func encode(to encoder: any Encoder) throws { try encodeBody(encoder) }
}

private struct NestedCustom: Encodable {
    enum Keys: String, CodingKey { case meta, list, zeta, alpha }
    enum MetaKeys: String, CodingKey { case version, kind }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode("z", forKey: .zeta)
        var meta = container.nestedContainer(keyedBy: MetaKeys.self, forKey: .meta)
        var list = container.nestedUnkeyedContainer(forKey: .list)
        try list.encode(1)
        try meta.encode(2, forKey: .version) // interleaved with the list
        var nested = list.nestedContainer(keyedBy: MetaKeys.self)
        try list.encode("after")
        try nested.encode("k", forKey: .kind)
        var inner = list.nestedUnkeyedContainer()
        try inner.encode(true)
        try meta.encode("m", forKey: .kind)
        try container.encode(0.5, forKey: .alpha)
    }
}

private struct SuperEncoders: Encodable {
    enum Keys: String, CodingKey { case a, b, c }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(1, forKey: .a)
        let superEncoder = container.superEncoder()
        let keyed = container.superEncoder(forKey: .b)
        _ = container.superEncoder(forKey: .c) // nothing written: {}
        var single = keyed.singleValueContainer()
        try single.encode("b")
        var superContainer = superEncoder.container(keyedBy: Keys.self)
        try superContainer.encode(true, forKey: .c)
    }
}

private struct UnkeyedSuper: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(1)
        let first = container.superEncoder()
        try container.encode(2)
        var single = first.singleValueContainer()
        try single.encode("x")
        _ = container.superEncoder()
    }
}

private struct ReusedContainers: Encodable {
    enum Keys: String, CodingKey { case a, b, c }
    func encode(to encoder: any Encoder) throws {
        var first = encoder.container(keyedBy: Keys.self)
        try first.encode(1, forKey: .b)
        var second = encoder.container(keyedBy: Keys.self)
        try second.encode(2, forKey: .c)
        var nested = first.nestedContainer(keyedBy: Keys.self, forKey: .a)
        try nested.encode(1, forKey: .a)
        var nestedAgain = first.nestedContainer(keyedBy: Keys.self, forKey: .a)
        try nestedAgain.encode(2, forKey: .b)
    }
}

private struct DuplicateKeys: Encodable {
    enum Keys: String, CodingKey { case a, b }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(1, forKey: .a)
        try container.encode(3, forKey: .a)
        var list = container.nestedUnkeyedContainer(forKey: .b)
        try list.encode(1)
        var listAgain = container.nestedUnkeyedContainer(forKey: .b)
        try listAgain.encode(2)
    }
}

private struct ScalarOverwritesContainer: Encodable {
    enum Keys: String, CodingKey { case a, b }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(1, forKey: .a)
        var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .b)
        try nested.encode(5, forKey: .a)
        try container.encode(7, forKey: .b)
    }
}

private struct SingleValueWrapper: Encodable {
    var inner: Outer
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(inner)
    }
}

/// Writes its own coding path, so the paths must agree too.
private struct CodingPathRecorder: Encodable {
    struct Leaf: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(
                encoder.codingPath.map { "\($0.stringValue)/\($0.intValue.map(String.init) ?? "-")" }
                    .joined(separator: ","))
        }
    }
    enum Keys: String, CodingKey { case a, b }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(Leaf(), forKey: .a)
        // (Not through nestedUnkeyedContainer(forKey:): Foundation leaves that key out of its elements' paths.)
        try container.encode(CodingPathList(), forKey: .b)
    }
}

private struct CodingPathList: Encodable {
    func encode(to encoder: any Encoder) throws {
        var list = encoder.unkeyedContainer()
        try list.encode(CodingPathRecorder.Leaf())
        try list.encode([CodingPathRecorder.Leaf(), CodingPathRecorder.Leaf()])
        try list.encode(["k": CodingPathRecorder.Leaf()])
        try list.encode([7: CodingPathRecorder.Leaf()])
    }
}

private class Base: Encodable {
    var base: Int
    init(base: Int) { self.base = base }
}

/// A subclass encoding its superclass into the same container (`super.encode(to: encoder)`), or through
/// `superEncoder()` (the `"super"` key).
private final class Derived: Base {
    var derived: String
    let viaSuperEncoder: Bool
    init(base: Int, derived: String, viaSuperEncoder: Bool = false) {
        self.derived = derived
        self.viaSuperEncoder = viaSuperEncoder
        super.init(base: base)
    }
    enum CodingKeys: String, CodingKey { case derived }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(derived, forKey: .derived)
        try super.encode(to: viaSuperEncoder ? container.superEncoder() : encoder)
    }
}

/// The shape of the database route's row.
private struct Account: Encodable {
    var aid: Int
    var abalance: Int
}

/// The shape of a message list response (ParleyMessaging's types are out of this target's reach).
private struct MessageLike: Encodable {
    struct Sender: Encodable {
        var userId: Int64
        var nickname: String
        var avatarKey: String?
    }
    var id: Int64
    var conversationId: String
    var seq: Int64
    var sender: Sender
    var type: String
    var content: String
    var mentions: [Int64]
    var replyTo: Int64?
    var createdAt: Date
    var editedAt: Date?
    var recalled: Bool
    var attachments: [[String: String]]

    static func sample(_ index: Int) -> MessageLike {
        MessageLike(
            id: 1_000 + Int64(index), conversationId: "c_\(index % 3)", seq: Int64(index),
            sender: Sender(
                userId: Int64(index * 7), nickname: "user \(index) é", avatarKey: index % 2 == 0 ? "a/\(index)" : nil),
            type: "text", content: "hello \"\(index)\"\nline", mentions: index % 4 == 0 ? [1, 2] : [],
            replyTo: index % 5 == 0 ? 3 : nil, createdAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)),
            editedAt: index % 3 == 0 ? Date(timeIntervalSince1970: 1_700_000_100.5) : nil, recalled: index == 7,
            attachments: index % 6 == 0 ? [["key": "k\(index)", "mime": "image/png"]] : [])
    }
}

private struct MessagePage: Encodable {
    var messages: [MessageLike]
    var hasMore: Bool
}

/// A recursive value with every kind of member, generated from a seed.
private indirect enum Random: Encodable {
    case int(Int), uint64(UInt64), double(Double), float(Float), string(String), bool(Bool), null, date(Date)
    case array([Random]), object([String: Random]), intKeyed([Int: Random]), record(Record)

    struct Record: Encodable {
        var name: String
        var count: Int?
        var child: Random?
        var list: [Random]
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .int(let v): try v.encode(to: encoder)
        case .uint64(let v): try v.encode(to: encoder)
        case .double(let v): try v.encode(to: encoder)
        case .float(let v): try v.encode(to: encoder)
        case .string(let v): try v.encode(to: encoder)
        case .bool(let v): try v.encode(to: encoder)
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .date(let v): try v.encode(to: encoder)
        case .array(let v): try v.encode(to: encoder)
        case .object(let v): try v.encode(to: encoder)
        case .intKeyed(let v): try v.encode(to: encoder)
        case .record(let v): try v.encode(to: encoder)
        }
    }

    static let alphabet: [String] = [
        "a", "b", "Z", "_", "0", "9", "é", "\u{1F600}", "\"", "\\", "/", "\n", "\u{1}", " ",
        "\u{7F}", "\u{2028}", "ab", "A",
    ]

    static func string<G: RandomNumberGenerator>(using rng: inout G) -> String {
        (0..<Int.random(in: 0...6, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }.joined()
    }

    static func value<G: RandomNumberGenerator>(depth: Int, using rng: inout G) -> Random {
        let pick = Int.random(in: 0..<(depth > 3 ? 8 : 12), using: &rng)
        switch pick {
        case 0: return .int(Int(truncatingIfNeeded: rng.next()) >> Int.random(in: 0...63, using: &rng))
        case 1: return .uint64(rng.next() >> UInt64.random(in: 0...63, using: &rng))
        case 2:
            let d = Double(bitPattern: rng.next())
            return .double(d.isFinite ? d : Double(Int.random(in: -100...100, using: &rng)) / 8)
        case 3: return .float(Float(Int.random(in: -100_000...100_000, using: &rng)) / 64)
        case 4: return .string(string(using: &rng))
        case 5: return .bool(Bool.random(using: &rng))
        case 6: return .null
        case 7: return .date(Date(timeIntervalSince1970: Double(Int.random(in: 0...2_000_000_000, using: &rng))))
        case 8:
            return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in value(depth: depth + 1, using: &rng) })
        case 9:
            var object: [String: Random] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &rng) {
                object[string(using: &rng)] = value(depth: depth + 1, using: &rng)
            }
            return .object(object)
        case 10:
            var object: [Int: Random] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                object[Int.random(in: -20...20, using: &rng)] = value(depth: depth + 1, using: &rng)
            }
            return .intKeyed(object)
        default:
            return .record(
                Record(
                    name: string(using: &rng),
                    count: Bool.random(using: &rng) ? Int.random(in: -9...9, using: &rng) : nil,
                    child: Bool.random(using: &rng) ? value(depth: depth + 1, using: &rng) : nil,
                    list: (0..<Int.random(in: 0...3, using: &rng)).map { _ in value(depth: depth + 1, using: &rng) }))
        }
    }
}

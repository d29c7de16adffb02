import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyLiveSupport
import ParleyMessageModel
import ParleyPostgres
import Testing

@testable import ParleyMessaging

/// File references in custom content: `FileReferences` (what messaging checks) and the database's
/// `parley_message_object_keys` (what grants reading and keeps files from the sweeper) run over the same fixtures
/// and must find the same keys.
@Suite("File references in custom messages")
struct FileReferencesTests {
    static func key(_ n: Int) -> String { "7/2026/01/" + String(format: "%022d", n) }

    /// Nested `levels` deep: the innermost object (level `levels`) holds `member`.
    static func nested(_ levels: Int, _ member: (String, JSONValue)) -> JSONValue {
        var value: JSONValue = .object(JSONObject([member]))
        for _ in 1..<levels { value = ["inner": value] }
        return value
    }

    /// Contents that are within the bounds, and the keys both sides must find in them.
    static let withinBounds: [(name: String, content: JSONValue, keys: Set<String>)] = [
        (
            "seed 000 image",
            ["type": "image", "object_key": .string(key(1)), "width": 16, "height": 9, "url_expire_at": 1_767_225_600],
            [key(1)]
        ),
        (
            "seed 000 multi_image",
            ["type": "multi_image", "object_keys": [.string(key(1)), .string(key(2)), .string(key(3))], "count": 3],
            [key(1), key(2), key(3)]
        ),
        ("seed 000 voice", ["type": "audio", "object_key": .string(key(4)), "duration_sec": 3], [key(4)]),
        (
            "every name, nested in objects and arrays",
            [
                "objectKey": .string(key(1)),
                "card": [
                    "items": [["cover": ["coverObjectKey": .string(key(2))]], ["thumbnailObjectKey": .string(key(3))]]
                ],
                "objectKeys": [.string(key(4))],
            ],
            [key(1), key(2), key(3), key(4)]
        ),
        ("a top-level array", [["object_key": .string(key(5))]], [key(5)]),
        (
            "repeats count once", ["object_key": .string(key(1)), "objectKeys": [.string(key(1)), .string(key(1))]],
            [key(1)]
        ),
        ("null is no reference", ["object_key": nil, "object_keys": nil], []),
        ("names as values are not names", ["note": "objectKey", "list": ["object_keys"]], []),
        ("no references", ["type": "signal_quote", "signal_id": "s1", "signal_content": "hi"], []),
        ("a bare string", "object_key", []),
        ("at the depth bound", nested(FileReferences.maxDepth, ("objectKey", .string(key(8)))), [key(8)]),
        (
            "at the count bound",
            ["object_keys": .array((1...FileReferences.maxCount).map { .string(key($0)) })],
            Set((1...FileReferences.maxCount).map(key))
        ),
    ]

    @Test func findsTheReferencesWithinTheBounds() throws {
        for fixture in Self.withinBounds {
            let found = try FileReferences.scan(fixture.content)
            #expect(Set(found) == fixture.keys, "\(fixture.name)")
            #expect(found.count == Set(found).count, "\(fixture.name): repeated keys")
        }
    }

    /// What the SQL function finds in the stored text of the same contents.
    @Test func theDatabaseFindsTheSameKeys() async throws {
        try await MessagingFixture.run { fixture in
            for sample in Self.withinBounds {
                let found = try await Self.storedKeys(fixture.database, msgType: "custom", sample.content)
                #expect(found == sample.keys, "\(sample.name)")
            }
            // Custom messages inside a forward, beside the flat fields of other types.
            let forward: JSONValue = [
                "messages": [
                    ["msgType": "custom", "content": ["type": "image", "object_key": .string(Self.key(1))]],
                    ["msgType": "image", "content": ["objectKey": .string(Self.key(2)), "width": 1, "height": 1]],
                ]
            ]
            let swift = try MessageContentValidator.objectKeys(.forward, forward)
            #expect(Set(swift) == [Self.key(1), Self.key(2)])
            #expect(try await Self.storedKeys(fixture.database, msgType: "forward", forward) == Set(swift))
        }
    }

    static func storedKeys(_ database: PostgresClient, msgType: String, _ content: JSONValue) async throws
        -> Set<String>
    {
        let text = content.serializedString
        let row = try await database.query(
            """
            SELECT coalesce(array_to_json(parley_message_object_keys(\(msgType), \(text)))::text, '[]') AS keys
            """)[0]
        let json = try JSONValue.parse(Array(try row.decode("keys", as: String.self).utf8))
        return Set((json.arrayValue ?? []).compactMap(\.stringValue))
    }

    /// Beyond the bounds messaging refuses (1002 naming the place), and the database, which never sees such a
    /// content from messaging, stops at the bounds.
    @Test func refusesWhatIsBeyondTheBounds() async throws {
        let tooDeep = Self.nested(FileReferences.maxDepth + 1, ("object_key", .string(Self.key(9))))
        let tooMany: JSONValue = ["object_keys": .array((1...10_000).map { .string(Self.key($0)) })]
        let refused: [(String, JSONValue, String)] = [
            ("too deep", tooDeep, "nested deeper than \(FileReferences.maxDepth)"),
            ("10,000 keys", tooMany, "content.object_keys[\(FileReferences.maxCount)]"),
            ("a number", ["objectKey": 5], "content.objectKey"),
            ("an object", ["object_key": ["k": "v"]], "content.object_key"),
            ("a list that is a string", ["object_keys": .string(Self.key(1))], "content.object_keys"),
            ("a list of numbers", ["object_keys": [1]], "content.object_keys[0]"),
            ("an empty key", ["object_key": ""], "printable ASCII"),
            ("a key with a line break", ["object_key": "7/2026/01/a\nb"], "printable ASCII"),
            ("a key of 513 characters", ["object_key": .string(String(repeating: "k", count: 513))], "printable"),
        ]
        for (name, content, message) in refused {
            do {
                _ = try FileReferences.scan(content)
                Issue.record("\(name): accepted")
            } catch {
                #expect(error.code == 1002, "\(name)")
                #expect(error.message.contains(message), "\(name): \(error.message)")
            }
        }
        // The count is checked as the scan goes: 10,000 keys cost as little as 33.
        let clock = ContinuousClock()
        let elapsed = clock.measure { _ = try? FileReferences.scan(tooMany) }
        #expect(elapsed < .seconds(1))

        try await MessagingFixture.run { fixture in
            #expect(try await Self.storedKeys(fixture.database, msgType: "custom", tooDeep).isEmpty)
            let bounded = try await Self.storedKeys(fixture.database, msgType: "custom", tooMany)
            #expect(bounded.count == FileReferences.maxCount)
        }
    }

    @Test func customReferencesInAForwardShareOneBound() {
        let half = FileReferences.maxCount / 2 + 1
        let custom: (Int) -> JSONValue = { offset in
            [
                "msgType": "custom",
                "content": ["object_keys": .array((1...half).map { .string(Self.key(offset + $0)) })],
            ]
        }
        #expect(throws: APIError.self) {
            try MessageContentValidator.objectKeys(.forward, ["messages": [custom(0), custom(1000)]])
        }
        #expect((try? MessageContentValidator.objectKeys(.forward, ["messages": [custom(0)]]))?.count == half)
    }
}

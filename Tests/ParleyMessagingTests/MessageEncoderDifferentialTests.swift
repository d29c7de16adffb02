import Foundation
import ParleyHTTP
import ParleyJSON
@testable import ParleyMessaging
import ParleyTestSupport
import Testing

/// `ImMessage.jsonBytes()` (the answer of a send, the realtime frame of every message) against the encoder every
/// other model goes through (`JSONCoding.bytesEncoder`): the same bytes for many generated messages, content and
/// extra included with their members out of order, numbers spelled every way JSON allows, and strings that need
/// escaping.
struct MessageEncoderDifferentialTests {
    @Test func jsonBytesMatchTheBytesEncoderForManyMessages() throws {
        var rng = SplitMix64(seed: 7)
        var compared = 0
        for index in 0..<3_000 {
            let message = Self.message(index, using: &rng)
            let expected = try JSONCoding.bytesEncoder.encode(message)
            let actual = message.jsonBytes()
            #expect(actual == expected, "\(String(decoding: actual, as: UTF8.self))\n\(String(decoding: expected, as: UTF8.self))")
            if actual != expected { break }
            compared += 1
        }
        #expect(compared == 3_000)
    }

    static let texts = ["", "a", "hi \"there\"\n", "tab\tand\\backslash", "\u{0}\u{1f}\u{7f}", "é/ü 中文 🙂", "a/b", "\u{2028}"]
    static let numbers = ["0", "-0", "1", "-1", "1.50", "1e2", "1E-7", "-0.0", "0.1", "9223372036854775807",
                          "-9223372036854775808", "18446744073709551616", "12345678901234567890123", "3.141592653589793238"]

    static func message<G: RandomNumberGenerator>(_ index: Int, using rng: inout G) -> ImMessage {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &rng)] }
        let chatType = pick([ChatType.single, .group])
        let revoked = Int.random(in: 0..<5, using: &rng) == 0
        // Dates from before 1970 to past 2100, with milliseconds.
        let created = Date(timeIntervalSince1970: Double(Int64.random(in: -2_000_000_000_000...4_200_000_000_000, using: &rng)) / 1000)
        return ImMessage(
            id: String(Int64.random(in: 1...Int64.max, using: &rng)),
            conversationId: chatType == .single ? "si:\(pick(texts)):b" : "sg:\(index)",
            seq: Int64.random(in: 0...Int64.max, using: &rng),
            fromId: pick(texts), toId: pick(texts), chatType: chatType, msgType: pick(MessageType.allCases),
            content: revoked ? .null : value(depth: 0, using: &rng),
            extra: revoked || Bool.random(using: &rng) ? nil : value(depth: 1, using: &rng),
            clientMsgId: pick(texts), revoked: revoked, revokedBy: revoked ? pick(texts) : nil,
            createdAt: created,
            editedAt: Bool.random(using: &rng) ? created.addingTimeInterval(Double(Int.random(in: 0...86_400_000, using: &rng)) / 1000) : nil)
    }

    static func value<G: RandomNumberGenerator>(depth: Int, using rng: inout G) -> JSONValue {
        let kind = Int.random(in: 0..<(depth >= 3 ? 4 : 7), using: &rng)
        switch kind {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .number(JSONNumber(text: numbers[Int.random(in: 0..<numbers.count, using: &rng)])!)
        case 3: return .string(texts[Int.random(in: 0..<texts.count, using: &rng)])
        case 4: return .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in value(depth: depth + 1, using: &rng) })
        default:
            // Keys deliberately out of order (and some that sort differently by bytes and by Swift's `<`).
            var members: [(String, JSONValue)] = []
            for key in ["z", "objectKey", "a", "é", "Z", "width", "height", "_", "aa"].shuffled(using: &rng)
                .prefix(Int.random(in: 0...5, using: &rng)) {
                members.append((key, value(depth: depth + 1, using: &rng)))
            }
            return .object(JSONObject(members))
        }
    }
}

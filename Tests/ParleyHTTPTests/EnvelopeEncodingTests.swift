import Foundation
import ParleyJSON
import Testing

@testable import ParleyHTTP

/// `Envelope.success` (now on JSONBytesEncoder) must wrap exactly the bytes `JSONCoding.encoder` writes.
@Suite("Envelope encoding")
struct EnvelopeEncodingTests {
    private struct Account: Codable { var aid: Int; var abalance: Int }
    private struct Item: Codable {
        var id: Int64
        var title: String
        var note: String?
        var createdAt: Date
        var updatedAt: Date?
        var tags: [String]
        var scores: [String: Double]
        var owner: Account
    }
    private struct Nothing: Encodable { func encode(to encoder: any Encoder) throws {} }

    private func foundationEnvelope<T: Encodable>(_ value: T) -> [UInt8] {
        let data = (try? JSONCoding.encoder.encode(value)).map { Array($0) } ?? Array("null".utf8)
        return Array(#"{"code":0,"message":"ok","data":"#.utf8) + data + [UInt8(ascii: "}")]
    }

    private func expectSame<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) {
        let actual = Envelope.success(value)
        let expected = foundationEnvelope(value)
        #expect(
            String(decoding: actual, as: UTF8.self) == String(decoding: expected, as: UTF8.self),
            sourceLocation: sourceLocation)
    }

    private static func item(_ i: Int) -> Item {
        let note: String? = i % 2 == 0 ? nil : "note\n\(i)"
        let created = Date(timeIntervalSince1970: 1_700_000_000.123 + Double(i) * 3_600.5)
        let updated: Date? = i % 3 == 0 ? Date(timeIntervalSince1970: Double(i) * -1_000_000_000.25) : nil
        let tags: [String] = (0..<(i % 4)).map { "t\($0)" }
        let scores: [String: Double] = ["z": 0.1 * Double(i), "a": 3.0]
        return Item(
            id: Int64(i), title: "item \(i) \"quoted\" a/b é", note: note, createdAt: created, updatedAt: updated,
            tags: tags, scores: scores, owner: Account(aid: i, abalance: -i))
    }

    @Test func matchesJSONCodingEncoder() {
        expectSame(Account(aid: 1, abalance: 0))
        let items = (0..<20).map(Self.item)
        expectSame(items)
        expectSame([
            "dates": [
                Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 253_402_300_800),
                Date(timeIntervalSince1970: -62_135_596_801),
            ]
        ])
        expectSame([String: Int]())
        expectSame(5)
        expectSame("s")
    }

    @Test func errorsBecomeNullData() {
        expectSame([Double.nan])
        expectSame(Nothing())
        #expect(Envelope.success(["x": Double.infinity]) == Array(#"{"code":0,"message":"ok","data":null}"#.utf8))
    }

    @Test func anErrorCarriesItsDataWhenItHasSome() {
        #expect(
            Envelope.failure(APIError.notFound)
                == Array(#"{"code":1004,"message":"not found","data":null}"#.utf8))
        let detailed = APIError(code: 1600, status: 403, message: "no \"way\"", data: Array(#"{"backendCode":7}"#.utf8))
        #expect(
            Envelope.failure(detailed)
                == Array(#"{"code":1600,"message":"no \"way\"","data":{"backendCode":7}}"#.utf8))
    }
}

import Foundation
import Testing

@testable import ParleyJSON

/// Times on the wire are whole milliseconds, the same in ISO 8601 (`createdAt`) as in epoch milliseconds
/// (`editedAt`, a mute's `until`): one given in milliseconds comes back as given, and a stored time with microseconds
/// is cut to its millisecond.
@Suite struct EpochMillisecondsTests {
    /// Around now and the far future, every millisecond of a few seconds (doubles that sit just below them too).
    static let exactMilliseconds: [Int64] = [Int64(1_796_407_787_000), 1_700_000_000_000, 253_402_300_796_000]
        .flatMap { base in (Int64(0)..<3000).map { base + $0 } }

    @Test func millisecondsRoundTripAndMicrosecondsAreCutDown() {
        for milliseconds in Self.exactMilliseconds {
            #expect(ISO8601.epochMilliseconds(Date(timeIntervalSince1970: Double(milliseconds) / 1000)) == milliseconds)
        }
        // Whole microseconds, as PostgreSQL stores them: .244999 s is still millisecond 244.
        #expect(ISO8601.epochMilliseconds(Date(timeIntervalSince1970: 1_796_407_787.244999)) == 1_796_407_787_244)
        #expect(ISO8601.epochMilliseconds(Date(timeIntervalSince1970: 1_796_407_787.245001)) == 1_796_407_787_245)
        #expect(ISO8601.epochMilliseconds(Date(timeIntervalSince1970: -0.0005)) == -1)
    }

    /// A `createdAt` names the millisecond a history window by epoch milliseconds finds it in: the ISO text once
    /// wrote .773 for a time stored at .774000 (its double just below), and a window ending at .773 left it out.
    @Test func iso8601WritesTheSameMillisecond() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        for milliseconds in Self.exactMilliseconds {
            let (seconds, millisecond) = milliseconds.quotientAndRemainder(dividingBy: 1000)
            let expected =
                formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
                + "." + String(millisecond + 1000).dropFirst() + "Z"
            #expect(ISO8601.format(Date(timeIntervalSince1970: Double(milliseconds) / 1000)) == expected)
        }
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1_796_407_787.999999)).hasSuffix(":47.999Z"))
    }
}

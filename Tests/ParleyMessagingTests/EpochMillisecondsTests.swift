import Foundation
import Testing

@testable import ParleyMessaging

/// Times on the wire are epoch milliseconds: one given in milliseconds comes back as given, and a stored time with
/// microseconds is cut to its millisecond.
@Suite struct EpochMillisecondsTests {
    @Test func millisecondsRoundTripAndMicrosecondsAreCutDown() {
        // Around now and the far future, every millisecond of a few seconds (doubles that sit just below them too).
        for base in [Int64(1_796_407_787_000), 1_700_000_000_000, 253_402_300_799_000] {
            for offset in Int64(0)..<3000 {
                let milliseconds = base + offset
                let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
                #expect(IMMessage.epochMilliseconds(date) == milliseconds)
            }
        }
        // Whole microseconds, as PostgreSQL stores them: .244999 s is still millisecond 244.
        #expect(IMMessage.epochMilliseconds(Date(timeIntervalSince1970: 1_796_407_787.244999)) == 1_796_407_787_244)
        #expect(IMMessage.epochMilliseconds(Date(timeIntervalSince1970: 1_796_407_787.245001)) == 1_796_407_787_245)
        #expect(IMMessage.epochMilliseconds(Date(timeIntervalSince1970: -0.0005)) == -1)
    }
}

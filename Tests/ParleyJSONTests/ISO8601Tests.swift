import Foundation
import Testing

@testable import ParleyJSON

/// ISO 8601 timestamps as every message carries them.
struct ISO8601Tests {
    @Test func iso8601MatchesTheCalendarOfLibc() {
        // Edges (epoch, leap days, year ends, before 1970, the last second of 9999) and a spread of instants.
        var instants: [Double] = [
            0, -0.001, -1, 951_782_400, 951_868_799.999, 1_709_164_800, 1_796_169_599.5,
            -2_208_988_800, -62_135_596_800, 253_402_300_799.999, 4_102_444_800.123,
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            instants.append(Double(Int64(bitPattern: state >> 1) % 20_000_000_000) / 1000 * 3)
        }
        for instant in instants {
            let date = Date(timeIntervalSince1970: instant)
            #expect(ISO8601.format(date) == ISO8601.general(date), "\(instant)")
        }
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1_796_169_599.5)) == "2026-12-01T23:59:59.500Z")
    }
}

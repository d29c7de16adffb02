import ParleyFiles
import Testing

@Suite("ByteRangeRequest")
struct ByteRangeRequestTests {
    static let cases: [(String?, Int64, RangeDecision)] = [
        // No header, or one to ignore (RFC 9110 §14.2).
        (nil, 1000, .full),
        ("", 1000, .full),
        ("bytes", 1000, .full),
        ("bytes=", 1000, .full),
        ("bytes=-", 1000, .full),
        ("bytes=abc", 1000, .full),
        ("bytes=5", 1000, .full),
        ("bytes=a-b", 1000, .full),
        ("bytes=0x10-", 1000, .full),
        ("bytes=+1-2", 1000, .full),
        ("bytes=-+5", 1000, .full),
        ("bytes=--5", 1000, .full),
        ("bytes=1-2-3", 1000, .full),
        ("bytes=1 0-20", 1000, .full),
        ("bytes 0-5", 1000, .full),
        ("items=0-5", 1000, .full),
        ("bytes-ish=0-5", 1000, .full),
        ("=0-5", 1000, .full),
        ("bytes=0-5,10-15", 1000, .full),
        ("bytes=0-5, -3", 1000, .full),
        ("bytes=0-5,0-5", 1000, .full),
        ("bytes=10-5", 1000, .full),
        ("bytes=10-5", 0, .full),
        ("bytes=１-2", 1000, .full),
        // One range (RFC 9110 §14.1.2).
        ("bytes=0-499", 1000, .partial(0...499)),
        ("bytes=500-999", 1000, .partial(500...999)),
        ("bytes=0-0", 1000, .partial(0...0)),
        ("bytes=999-999", 1000, .partial(999...999)),
        ("bytes=5-5", 6, .partial(5...5)),
        ("bytes=0-", 1000, .partial(0...999)),
        ("bytes=900-", 1000, .partial(900...999)),
        ("bytes=999-", 1000, .partial(999...999)),
        ("bytes=-1", 1000, .partial(999...999)),
        ("bytes=-500", 1000, .partial(500...999)),
        ("bytes=-1000", 1000, .partial(0...999)),
        ("bytes=0-999", 1000, .partial(0...999)),
        // last-pos past the end is clamped; a suffix longer than the file is all of it.
        ("bytes=0-1000", 1000, .partial(0...999)),
        ("bytes=500-99999999", 1000, .partial(500...999)),
        ("bytes=0-99999999999999999999999", 1000, .partial(0...999)),
        ("bytes=-5000", 1000, .partial(0...999)),
        ("bytes=-99999999999999999999999", 1000, .partial(0...999)),
        // Whitespace and case.
        ("  bytes=0-9  ", 1000, .partial(0...9)),
        ("Bytes=0-9", 1000, .partial(0...9)),
        ("BYTES=0-9", 1000, .partial(0...9)),
        ("bytes = 0 - 9", 1000, .partial(0...9)),
        ("bytes=\t-9", 1000, .partial(991...999)),
        ("bytes=0-9,", 1000, .partial(0...9)),
        ("bytes=, 0-9 ,", 1000, .partial(0...9)),
        ("bytes=00010-00019", 1000, .partial(10...19)),
        // Unsatisfiable (RFC 9110 §14.1.1, §15.5.17).
        ("bytes=1000-", 1000, .unsatisfiable),
        ("bytes=1000-2000", 1000, .unsatisfiable),
        ("bytes=99999999999999999999999-", 1000, .unsatisfiable),
        ("bytes=-0", 1000, .unsatisfiable),
        ("bytes=-000", 1000, .unsatisfiable),
        ("bytes=0-", 0, .unsatisfiable),
        ("bytes=0-0", 0, .unsatisfiable),
        ("bytes=-5", 0, .unsatisfiable),
        ("bytes=-0", 0, .unsatisfiable),
        // Sizes past 4 GiB.
        ("bytes=5000000000-", 6_000_000_000, .partial(5_000_000_000...5_999_999_999)),
        ("bytes=-1", Int64.max, .partial((Int64.max - 1)...(Int64.max - 1))),
        ("bytes=0-", Int64.max, .partial(0...(Int64.max - 1))),
    ]

    @Test(arguments: cases)
    func evaluates(_ header: String?, _ size: Int64, _ expected: RangeDecision) {
        #expect(ByteRangeRequest.evaluate(rangeHeader: header, size: size) == expected)
    }

    @Test func formatsContentRange() {
        #expect(ByteRangeRequest.contentRange(0...499, size: 1234) == "bytes 0-499/1234")
        #expect(ByteRangeRequest.contentRange(1233...1233, size: 1234) == "bytes 1233-1233/1234")
        #expect(
            ByteRangeRequest.contentRange(5_000_000_000...5_999_999_999, size: 6_000_000_000)
                == "bytes 5000000000-5999999999/6000000000")
        #expect(ByteRangeRequest.unsatisfiedContentRange(size: 1234) == "bytes */1234")
        #expect(ByteRangeRequest.unsatisfiedContentRange(size: 0) == "bytes */0")
    }

    @Test func everyPartialRangeLiesInsideTheRepresentation() {
        for size in Int64(0)...12 {
            for first in 0...14 {
                for last in [nil] + Array(0...14) {
                    let header = "bytes=\(first)-\(last.map(String.init) ?? "")"
                    check(header, size)
                }
                check("bytes=-\(first)", size)
            }
        }
    }

    private func check(_ header: String, _ size: Int64) {
        if case .partial(let range) = ByteRangeRequest.evaluate(rangeHeader: header, size: size) {
            #expect(range.lowerBound >= 0 && range.upperBound < size, "\(header) size \(size)")
        }
    }
}

import ParleyJSON
import ParleyTestSupport
import Testing

@Suite("Numbers keep their text")
struct JSONNumberTests {
    @Test func largeIntegerKeepsItsText() throws {
        let value = try JSONValue.parse("12345678901234567890")
        #expect(value.numberValue?.text == "12345678901234567890")
        #expect(value.int64Value == nil)
        #expect(value.numberValue?.isInteger == false)
        #expect(value.serializedString == "12345678901234567890")
        #expect(value.doubleValue == 12_345_678_901_234_567_890.0)
    }

    @Test func textIsNeverNormalized() throws {
        for text in ["1.0", "1e2", "1E+02", "-0", "-0.0", "0.10", "123.456e-7", "1e400", "-1e-400"] {
            #expect(try JSONValue.parse(text).serializedString == text)
        }
    }

    @Test(
        arguments: [
            ("12", 12), ("-3", -3), ("0", 0), ("-0", 0), ("0.0", 0), ("-0.000e5", 0),
            ("1.0", 1), ("1e2", 100), ("1e3", 1000), ("1E+3", 1000), ("150e-1", 15), ("0.1e1", 1), ("0.00001e5", 1),
            ("100000000000000000000e-2", 1_000_000_000_000_000_000), ("1e18", 1_000_000_000_000_000_000),
            ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min),
            ("9.223372036854775807e18", Int64.max), ("10203.0000", 10203), ("1020300e-2", 10203),
        ] as [(String, Int64)])
    func exactIntegers(_ text: String, _ expected: Int64) throws {
        let number = try #require(JSONNumber(text: text))
        #expect(number.int64Value == expected)
        #expect(number.isInteger)
    }

    @Test(arguments: [
        "1.5", "1e-1", "-0.5", "0.1", "1e19", "9223372036854775808", "-9223372036854775809",
        "12345678901234567890", "1e999999999999999999999", "1.0000000000000000000001", "123456789012345678901e-5",
        "1e-999999999999999999999",
    ])
    func notExactIntegers(_ text: String) throws {
        let number = try #require(JSONNumber(text: text))
        #expect(number.int64Value == nil)
        #expect(!number.isInteger)
    }

    @Test func hugeDigitRunsConvertWithoutOverflow() throws {
        let fraction = "0." + String(repeating: "0", count: 100_000) + "1e100001"
        #expect(JSONNumber(text: fraction)?.int64Value == 1)
        let zeros = "1" + String(repeating: "0", count: 100_000) + "e-100000"
        #expect(JSONNumber(text: zeros)?.int64Value == 1)
    }

    @Test func textValidation() {
        for valid in ["0", "-0", "1", "-1", "10", "1.5", "0.5", "1e5", "1E5", "1e+5", "1e-5", "-1.5e-5", "0e0"] {
            #expect(JSONNumber(text: valid)?.text == valid, "\(valid) is valid")
        }
        for invalid in [
            "", "-", "+1", "01", "-01", "1.", ".5", "1e", "1e+", "1.e3", "0x10", "NaN", "Infinity",
            " 1", "1 ", "1_000", "１", "1.5.5", "--1", "1e5e5",
        ] {
            #expect(JSONNumber(text: invalid) == nil, "\(invalid) is invalid")
        }
    }

    @Test func integerInitializers() {
        #expect(JSONNumber(Int64.min).text == "-9223372036854775808")
        #expect(JSONNumber(Int64.max).int64Value == Int64.max)
        #expect(JSONNumber(-42 as Int).text == "-42")
    }

    @Test func doubleInitializerWritesShortestText() {
        #expect(JSONNumber(1.0)?.text == "1")
        #expect(JSONNumber(-0.0)?.text == "-0")
        #expect(JSONNumber(0.1)?.text == "0.1")
        #expect(JSONNumber(1.5)?.text == "1.5")
        #expect(JSONNumber(1e300)?.text == "1e+300")
        #expect(JSONNumber(1e-7)?.text == "1e-07")
        #expect(JSONNumber(.nan) == nil)
        #expect(JSONNumber(.infinity) == nil)
        #expect(JSONNumber(-.infinity) == nil)
    }

    @Test func doublesRoundTripThroughText() throws {
        var random = SplitMix64(seed: 0x5EED_D0B1E)
        for _ in 0..<5_000 {
            let value = Double(bitPattern: random.next())
            guard value.isFinite else { continue }
            let number = try #require(JSONNumber(value))
            #expect(JSONNumber(text: number.text) != nil, "\(number.text) is valid JSON")
            #expect(number.doubleValue.bitPattern == value.bitPattern)
            let reparsed = try JSONValue.parse(number.text)
            #expect(reparsed.doubleValue?.bitPattern == value.bitPattern)
        }
    }

    @Test func doubleValueOfOutOfRangeText() throws {
        #expect(try #require(JSONNumber(text: "1e400")).doubleValue == .infinity)
        #expect(try #require(JSONNumber(text: "-1e400")).doubleValue == -.infinity)
        #expect(try #require(JSONNumber(text: "1e-400")).doubleValue == 0)
    }

    @Test func equalityIsTextual() {
        #expect(JSONNumber(text: "1") == JSONNumber(1))
        #expect(JSONNumber(text: "1.0") != JSONNumber(1))
        #expect(JSONNumber(text: "1.0")?.int64Value == JSONNumber(1).int64Value)
    }
}

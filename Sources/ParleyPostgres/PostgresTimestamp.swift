import Foundation
import ParleyBytes

/// Conversions between `Date` and PostgreSQL's ISO text forms without Foundation formatters
/// (they are slow and locale-dependent). Dates are proleptic Gregorian, like PostgreSQL's.
enum PostgresTimestamp {
    static func microseconds(of date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000_000).rounded()
        if value >= 9.2e18 { return Int64.max }
        if value <= -9.2e18 { return Int64.min }
        return Int64(value)
    }

    static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00` (with ` BC` before year 1), accepted by `timestamptz` input.
    static func format(microseconds: Int64) -> String {
        if microseconds == .max { return "infinity" }
        if microseconds == .min { return "-infinity" }
        let (days, dayMicros) = CivilCalendar.floorDivide(microseconds, 86_400_000_000)
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        var seconds = dayMicros / 1_000_000
        let fraction = dayMicros % 1_000_000
        let hour = seconds / 3600
        seconds %= 3600
        var out: [UInt8] = []
        out.reserveCapacity(32)
        let displayYear = year <= 0 ? 1 - year : year
        appendDigits(displayYear, width: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(month, width: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(day, width: 2, to: &out)
        out.append(UInt8(ascii: " "))
        appendDigits(hour, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(seconds / 60, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(seconds % 60, width: 2, to: &out)
        out.append(UInt8(ascii: "."))
        appendDigits(fraction, width: 6, to: &out)
        out.append(contentsOf: "+00".utf8)
        if year <= 0 { out.append(contentsOf: " BC".utf8) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses the ISO output of `timestamptz`, `timestamp` (taken as UTC) and `date` (midnight UTC):
    /// `2024-05-06 07:08:09.123456+05:30`, `... BC`, `infinity`, `-infinity`.
    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var p = Parser(bytes: text)
        if p.matches("infinity") { return p.atEnd ? Int64.max : nil }
        if p.matches("-infinity") { return p.atEnd ? Int64.min : nil }
        guard var year = p.number(minDigits: 4), p.take(UInt8(ascii: "-")),
            let month = p.number(exactDigits: 2), p.take(UInt8(ascii: "-")),
            let day = p.number(exactDigits: 2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var micros: Int64 = 0
        if p.take(UInt8(ascii: " ")) || p.take(UInt8(ascii: "T")) {
            guard let hour = p.number(exactDigits: 2), p.take(UInt8(ascii: ":")),
                let minute = p.number(exactDigits: 2), p.take(UInt8(ascii: ":")),
                let second = p.number(exactDigits: 2), hour <= 24, minute < 60, second < 61
            else { return nil }
            micros = (Int64(hour) * 3600 + Int64(minute) * 60 + Int64(second)) * 1_000_000
            if p.take(UInt8(ascii: ".")) {
                var scale: Int64 = 100_000
                var digits = 0
                while let d = p.digit() {
                    digits += 1
                    if scale > 0 { micros += Int64(d) * scale; scale /= 10 }
                }
                if digits == 0 { return nil }
            }
            if let sign = p.peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                p.advance()
                guard let offHours = p.number(exactDigits: 2) else { return nil }
                var offset = Int64(offHours) * 3600
                if p.take(UInt8(ascii: ":")) {
                    guard let offMinutes = p.number(exactDigits: 2) else { return nil }
                    offset += Int64(offMinutes) * 60
                    if p.take(UInt8(ascii: ":")) {
                        guard let offSeconds = p.number(exactDigits: 2) else { return nil }
                        offset += Int64(offSeconds)
                    }
                }
                // The text shows local time = UTC + offset.
                micros -= (sign == UInt8(ascii: "+") ? offset : -offset) * 1_000_000
            } else if p.take(UInt8(ascii: "Z")) {
                // UTC.
            }
        }
        if p.matches(" BC") { year = 1 - year }
        guard p.atEnd else { return nil }
        let days = days(fromYear: Int64(year), month: Int64(month), day: Int64(day))
        let (product, overflow) = days.multipliedReportingOverflow(by: 86_400_000_000)
        if overflow { return nil }
        let (sum, overflow2) = product.addingReportingOverflow(micros)
        return overflow2 ? nil : sum
    }

    // MARK: Calendar arithmetic (Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms")

    static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func appendDigits(_ value: Int64, width: Int, to out: inout [UInt8]) {
        DecimalASCII.appendPadded(Int(value), width: width, to: &out)
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var atEnd: Bool { index == bytes.count }

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func advance() { index += 1 }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek() == byte else { return false }
            index += 1
            return true
        }

        mutating func matches(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            let literal = UnsafeBufferPointer(start: text.utf8Start, count: count)
            for i in 0..<count where bytes[index + i] != literal[i] { return false }
            index += count
            return true
        }

        mutating func digit() -> Int? {
            guard let b = peek(), b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return nil }
            index += 1
            return Int(b - UInt8(ascii: "0"))
        }

        mutating func number(exactDigits: Int) -> Int? {
            var value = 0
            for _ in 0..<exactDigits {
                guard let d = digit() else { return nil }
                value = value * 10 + d
            }
            return value
        }

        mutating func number(minDigits: Int) -> Int? {
            var value = 0
            var count = 0
            while let d = digit() {
                value = value * 10 + d
                count += 1
                if count > 9 { return nil }
            }
            return count >= minDigits ? value : nil
        }
    }
}

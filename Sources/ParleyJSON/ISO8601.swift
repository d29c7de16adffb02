import Foundation
import ParleyBytes

/// ISO 8601 UTC with milliseconds, e.g. `2026-12-01T02:03:04.123Z`.
public enum ISO8601 {
    /// `2026-12-01T14:16:51.492Z` (UTC, milliseconds truncated).
    public static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The same 24 bytes appended to `out`, with no string or libc call on the way (every message frame carries one
    /// or two).
    public static func append(_ date: Date, to out: inout [UInt8]) {
        let interval = date.timeIntervalSince1970
        let floored = floor(interval)
        guard floored.magnitude < 253_402_300_800 else { // beyond year 9999: the general formatter
            out.append(contentsOf: general(date).utf8)
            return
        }
        let (days, secondOfDay) = CivilCalendar.floorDivide(Int64(floored), 86_400)
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        guard year >= 0 && year <= 9999 else {
            out.append(contentsOf: general(date).utf8)
            return
        }
        let seconds = Int(secondOfDay)
        DecimalASCII.appendPadded(Int(year), width: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        DecimalASCII.appendPadded(Int(month), width: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        DecimalASCII.appendPadded(Int(day), width: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        DecimalASCII.appendPadded(seconds / 3600, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        DecimalASCII.appendPadded(seconds / 60 % 60, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        DecimalASCII.appendPadded(seconds % 60, width: 2, to: &out)
        out.append(UInt8(ascii: "."))
        DecimalASCII.appendPadded(Int((interval - floored) * 1000), width: 3, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// Any date gmtime_r can express (years outside 0...9999 keep their own width).
    static func general(_ date: Date) -> String {
        var seconds = time_t(floor(date.timeIntervalSince1970))
        let millis = Int((date.timeIntervalSince1970 - Double(seconds)) * 1000)
        var tm = tm()
        gmtime_r(&seconds, &tm)
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return
            "\(pad(tm.tm_year + 1900, 4))-\(pad(tm.tm_mon + 1, 2))-\(pad(tm.tm_mday, 2))T\(pad(tm.tm_hour, 2)):\(pad(tm.tm_min, 2)):\(pad(tm.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }
}

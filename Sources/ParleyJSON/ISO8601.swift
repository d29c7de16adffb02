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
        guard date.timeIntervalSince1970.magnitude < 253_402_300_800 else { // beyond year 9999: the general formatter
            out.append(contentsOf: general(date).utf8)
            return
        }
        let (wholeSeconds, milliseconds) = CivilCalendar.floorDivide(epochMilliseconds(date), 1000)
        let (days, secondOfDay) = CivilCalendar.floorDivide(wholeSeconds, 86_400)
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
        DecimalASCII.appendPadded(Int(milliseconds), width: 3, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// The whole milliseconds of `date`, as every timestamp goes out (ISO 8601 here, epoch milliseconds elsewhere).
    /// A time given in milliseconds comes back as given: its double may sit just below the millisecond (.245 as
    /// .2449999...), so half a microsecond (or two units of the double's precision, for far-off years where that is
    /// coarser) is added before rounding down; stored times have whole microseconds, so none crosses a millisecond by
    /// it.
    public static func epochMilliseconds(_ date: Date) -> Int64 {
        let interval = date.timeIntervalSince1970
        let seconds = floor(interval)
        let guardBand = max(0.0005, interval.ulp * 2000)
        return Int64(seconds) * 1000 + Int64(((interval - seconds) * 1000 + guardBand).rounded(.down))
    }

    /// Any date gmtime_r can express (years outside 0...9999 keep their own width).
    static func general(_ date: Date) -> String {
        let (wholeSeconds, millis) = CivilCalendar.floorDivide(epochMilliseconds(date), 1000)
        var seconds = time_t(wholeSeconds)
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

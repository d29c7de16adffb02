import Foundation
import ParleyBytes

/// A calendar day in UTC, the unit every daily statistic is kept in (one answer whatever the server's time zone).
public struct UTCDay: Sendable, Hashable, Comparable {
    /// Days since 1970-01-01.
    public let number: Int64

    public init(number: Int64) { self.number = number }

    public init(_ date: Date) {
        number = Int64((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    public static var today: UTCDay { UTCDay(Date()) }

    public func adding(days: Int64) -> UTCDay { UTCDay(number: number + days) }

    /// `YYYY-MM-DD` (what PostgreSQL reads as a `date`, and what the stats answer shows).
    public var iso: String {
        let (year, month, day) = CivilCalendar.date(fromDays: number)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public static func < (lhs: UTCDay, rhs: UTCDay) -> Bool { lhs.number < rhs.number }
}

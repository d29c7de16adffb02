import ParleyHTTP

/// Which page of a conversation's history to read (`GET /api/im/conversations/{id}/messages`): seq bounds
/// (`before` / `after`, exclusive), a time window (`begin` / `end`, epoch milliseconds, inclusive), the page size and
/// the order of the answer.
public struct HistoryQuery: Sendable, Hashable {
    public enum Order: String, Sendable, Hashable {
        case asc, desc
    }

    /// 0 is no bound (the newest page), as RTM's first history call sends `lastid 0` (seed 002).
    public var before: Int64?
    public var after: Int64?
    /// Epoch milliseconds, inclusive.
    public var begin: Int64?
    /// Epoch milliseconds, inclusive; 0 is no bound (as seed 002's RTM history calls send it).
    public var end: Int64?
    public var limit: Int
    /// nil: oldest first, as before `order` existed.
    public var order: Order?

    /// The latest milliseconds a bound may name (the end of year 9999, the last instant timestamps are written for).
    static let maxMilliseconds: Int64 = 253_402_300_799_999

    public init(
        before: Int64? = nil, after: Int64? = nil, begin: Int64? = nil, end: Int64? = nil, limit: Int,
        order: Order? = nil
    ) {
        self.before = before == 0 ? nil : before
        self.after = after
        self.begin = begin
        self.end = end == 0 ? nil : end
        self.limit = limit
        self.order = order
    }

    /// The page holds the messages nearest the lower bound (`after`, or `begin` when read in ascending order without
    /// an anchor) when true, else those nearest the upper bound (`before`, `end`, or the newest message).
    var readsForward: Bool { after != nil || (before == nil && order == .asc) }

    /// From the query string; every bad value or combination is 1002 naming the parameter.
    init(_ query: HTTPQuery, maxLimit: Int) throws(APIError) {
        func integer(_ name: String, _ range: ClosedRange<Int64>) throws(APIError) -> Int64? {
            try query.integer(for: name, in: range)
        }
        let before = try integer("before", 0...Int64.max)
        let after = try integer("after", 0...Int64.max)
        guard (before ?? 0) == 0 || after == nil else {
            throw APIError.validationFailed.with(message: "give `before` or `after`, not both")
        }
        let begin = try integer("begin", 0...Self.maxMilliseconds)
        let end = try integer("end", 0...Self.maxMilliseconds)
        if let begin, let end, end != 0, begin > end {
            throw APIError.validationFailed.with(message: "`begin` must not be after `end`")
        }
        let limit = Int(try integer("limit", 1...Int64(maxLimit)) ?? 50)
        var order: Order?
        if let raw = try query.value(for: "order") {
            guard let parsed = Order(rawValue: String(raw)) else {
                throw APIError.validationFailed.with(message: "`order` must be asc or desc")
            }
            order = parsed
        }
        self.init(before: before, after: after, begin: begin, end: end, limit: limit, order: order)
    }
}

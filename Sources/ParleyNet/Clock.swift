import Glibc

/// Nanoseconds on the monotonic clock; the unit of every deadline and timeout in Parley.
public struct Instant: Sendable, Hashable, Comparable {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    public static func now() -> Instant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Instant(nanoseconds: UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec))
    }

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public static func + (lhs: Instant, rhs: Duration) -> Instant {
        Instant(nanoseconds: lhs.nanoseconds &+ rhs.nanosecondsClamped)
    }

    /// Nanoseconds from `earlier` to `self`, zero if `earlier` is later: for per-request timing, where
    /// `Duration`'s 128-bit arithmetic costs more than the rest of the measurement.
    @inline(__always)
    public func nanoseconds(since earlier: Instant) -> UInt64 {
        nanoseconds >= earlier.nanoseconds ? nanoseconds - earlier.nanoseconds : 0
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    public func since(_ earlier: Instant) -> Duration {
        nanoseconds >= earlier.nanoseconds ? .nanoseconds(Int64(nanoseconds - earlier.nanoseconds)) : .zero
    }
}

extension Duration {
    /// Whole nanoseconds, clamped at zero and at UInt64.max / 2 so deadlines never wrap.
    public var nanosecondsClamped: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 { return 0 }
        if seconds > 4_000_000_000 { return UInt64.max / 2 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    public var secondsDouble: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

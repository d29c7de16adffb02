import ParleyNet

/// CLOCK_MONOTONIC in nanoseconds (ParleyNet's `Instant`). Senders put this in the message content and the
/// receiver, in the same process, subtracts it from its own reading: no clock skew to correct.
enum MonotonicClock {
    static func now() -> Int64 { Int64(Instant.now().nanoseconds) }

    static func seconds(since start: Int64) -> Double { Double(now() - start) / 1e9 }
}

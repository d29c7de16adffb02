/// Which connection of `parley-bench cluster` is whom: pairs at `2i` (A, the sender) and `2i + 1` (B), then `groupSize` connections per
/// group, the owner first and members 1...`groupSenders` sending.
struct ClusterLayout {
    var pairs: Int
    var groups: Int
    var groupSize: Int
    var groupSenders: Int

    var connections: Int { 2 * pairs + groups * groupSize }

    /// The group a connection belongs to; nil for the pairs' connections.
    func group(of index: Int) -> Int? {
        index < 2 * pairs ? nil : (index - 2 * pairs) / groupSize
    }

    var senderIndexes: [Int] {
        (0..<pairs).map { 2 * $0 }
            + (0..<groups).flatMap { g in (1...groupSenders).map { 2 * pairs + g * groupSize + $0 } }
    }

    /// What each connection must have received, from what each sender (by connection index) stored: B its A's
    /// messages, a group member its group's messages from everyone but itself.
    func expectedDeliveries(acked: [Int: Int]) -> [Int] {
        var expected = [Int](repeating: 0, count: connections)
        for i in 0..<pairs { expected[2 * i + 1] = acked[2 * i] ?? 0 }
        for g in 0..<groups {
            let first = 2 * pairs + g * groupSize
            let stored = (1...groupSenders).reduce(0) { $0 + (acked[first + $1] ?? 0) }
            for member in 0..<groupSize {
                expected[first + member] = stored - (acked[first + member] ?? 0)
            }
        }
        return expected
    }
}

import Synchronization

/// Totals of a run, shared by the loops and read by the main thread while it waits (for every connection to
/// open, for the drain to finish). Relaxed atomics: these are counts, nothing is published through them.
final class RunCounters: Sendable {
    /// 101 received.
    let opened = Atomic<Int>(0)
    /// `hello` received: the gateway registered the connection, deliveries can reach it.
    let helloed = Atomic<Int>(0)
    /// Connections that never got their `hello`.
    let setupFailures = Atomic<Int>(0)
    /// Connections that ended before the benchmark closed them.
    let unexpectedEnds = Atomic<Int>(0)
    /// Connections ended for any reason.
    let ended = Atomic<Int>(0)

    let sent = Atomic<Int>(0)
    let acked = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    /// Acks whose `reqId` was not the next one the sender expected (requests are answered in order).
    let ackMismatches = Atomic<Int>(0)
    /// Our messages received, whenever.
    let delivered = Atomic<Int>(0)
    /// Deliveries the acked messages call for (each sender's recipients per ack).
    let expectedDeliveries = Atomic<Int>(0)
    /// Messages that are not ours (e.g. the group's creation notice).
    let foreignMessages = Atomic<Int>(0)
    /// Frames of other types (conversation changes...).
    let otherFrames = Atomic<Int>(0)
    let windowAcks = Atomic<Int>(0)
    let windowDeliveries = Atomic<Int>(0)
    /// Answers to the requests of connections without a sender (the idle check's `ping`, presence frames).
    let appPingAcks = Atomic<Int>(0)
    /// Errors answered to those requests.
    let appRequestErrors = Atomic<Int>(0)
    /// `presence` events received, and the user entries in them.
    let presenceFrames = Atomic<Int>(0)
    let presenceEntries = Atomic<Int>(0)

    /// Why things went wrong, with counts: the first 20 distinct reasons.
    private let reasons = Mutex<[(String, Int)]>([])

    func note(_ reason: String) {
        reasons.withLock { list in
            if let i = list.firstIndex(where: { $0.0 == reason }) {
                list[i].1 += 1
            } else if list.count < 20 {
                list.append((reason, 1))
            }
        }
    }

    /// "3 x reason; 1 x other reason".
    var reasonSummary: String {
        reasons.withLock { list in list.map { "\($0.1) x \($0.0)" }.joined(separator: "; ") }
    }
}

extension Atomic where Value == Int {
    func bump(by amount: Int = 1) { wrappingAdd(amount, ordering: .relaxed) }
    var value: Int { load(ordering: .relaxed) }
}

import Synchronization

/// The bytes every connection's buffered request bodies may hold together. Each route's body limit bounds one
/// request, not how many arrive at once: without a global bound, many connections sending large bodies slowly
/// hold limit × connections bytes. Shared by the loops: one atomic add per body chunk, one subtract per request.
final class BodyBudget: Sendable {
    let limit: Int
    private let held = Atomic<Int>(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Bytes held now.
    var used: Int { held.load(ordering: .relaxed) }

    /// Takes `bytes` from the budget; false (taking nothing) when they would go past the limit. Two reservations
    /// racing near the limit may both fail where one alone would fit: a refusal errs on the safe side.
    @inline(__always)
    func reserve(_ bytes: Int) -> Bool {
        if held.add(bytes, ordering: .relaxed).newValue <= limit { return true }
        held.subtract(bytes, ordering: .relaxed)
        return false
    }

    /// Gives back bytes taken by `reserve`.
    @inline(__always)
    func release(_ bytes: Int) {
        if bytes > 0 { held.subtract(bytes, ordering: .relaxed) }
    }
}

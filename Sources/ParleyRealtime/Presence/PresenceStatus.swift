/// A user's (or one connection's) presence. A user's status is the best of their connections on every instance:
/// online beats away beats offline.
enum PresenceStatus: String, Sendable, Comparable, CaseIterable {
    case offline
    case away
    case online

    private var rank: Int {
        switch self {
        case .offline: 0
        case .away: 1
        case .online: 2
        }
    }

    static func < (lhs: PresenceStatus, rhs: PresenceStatus) -> Bool { lhs.rank < rhs.rank }

    /// The best of `statuses`; offline when there are none.
    static func best(_ statuses: some Sequence<PresenceStatus>) -> PresenceStatus {
        statuses.reduce(.offline, max)
    }
}

/// What happens beside the live events, for devices with no socket: ParleyApp hands in the offline push (VoIP on
/// invite, a cancel when the call ends before they answered). Called after the commit; each does its own error
/// handling (a failed push must not fail the call).
public struct CallNotifier: Sendable {
    /// A call rings: the ringing callees with no live socket anywhere in the cluster.
    public var invited: @Sendable (_ call: Call, _ offlineCalleeIds: [String]) async -> Void
    /// A callee answered on one device: their other devices (that a VoIP push may have rung) stop ringing.
    public var answered: @Sendable (_ call: Call, _ userId: String, _ sessionId: String) async -> Void
    /// The call ended: the callees who never answered it (their rung devices stop ringing).
    public var ended: @Sendable (_ call: Call, _ calleeIdsWhoNeverAnswered: [String]) async -> Void

    public init(
        invited: @escaping @Sendable (Call, [String]) async -> Void,
        answered: @escaping @Sendable (Call, String, String) async -> Void = { _, _, _ in },
        ended: @escaping @Sendable (Call, [String]) async -> Void
    ) {
        self.invited = invited
        self.answered = answered
        self.ended = ended
    }

    /// Nothing beyond the live events.
    public static let none = CallNotifier(invited: { _, _ in }, ended: { _, _ in })
}

/// Of `userIds` in the app, those with a live socket on any instance (the realtime gateway's cluster presence).
public typealias OnlineUsers = @Sendable (_ appId: Int64, _ userIds: [String]) async throws -> Set<String>

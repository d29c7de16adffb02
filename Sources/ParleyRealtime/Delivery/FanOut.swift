import ParleyObservability
import ParleyWebSocket

/// Sends deliveries to the connections of this instance: resolves the audience (member cache), looks up the
/// recipients' open connections and hands the one encoded frame to each, one hop per event loop.
final class FanOut: Sendable {
    let registry: ConnectionRegistry
    let members: MemberCache
    let logger: Logger
    let deliveries: Counter

    init(registry: ConnectionRegistry, members: MemberCache, logger: Logger, metrics: MetricsRegistry) {
        self.registry = registry
        self.members = members
        self.logger = logger
        deliveries = metrics.counter("parley_realtime_deliveries_total",
                                     help: "Event frames handed to gateway connections.").labels()
    }

    func deliver(_ delivery: Delivery) async {
        if delivery.membershipChanged {
            members.invalidate(appId: delivery.appId, conversationId: delivery.conversationId)
        }
        var userIds: [String]
        switch delivery.audience {
        case .user(let userId):
            userIds = [userId]
        case .conversationMembers, .conversationMembersAnd:
            do {
                userIds = try await members.members(appId: delivery.appId, conversationId: delivery.conversationId)
            } catch {
                // Clients recover by sync; say so in the log.
                logger.warning("fan-out could not load members", ["conversation": .string(delivery.conversationId),
                                                                  "error": .string(String(describing: error))])
                return
            }
            if case .conversationMembersAnd(let extra) = delivery.audience {
                for user in extra where !userIds.contains(user) { userIds.append(user) }
            }
        }
        if let excluded = delivery.excludedUserId { userIds.removeAll { $0 == excluded } }
        let handles = registry.connections(appId: delivery.appId, userIds: userIds,
                                           excludingSession: delivery.originSessionId)
        guard !handles.isEmpty else { return }
        deliveries.increment(by: handles.count)
        WebSocketSessionHandle.broadcast(encodedFrame: delivery.frame, to: handles)
    }
}

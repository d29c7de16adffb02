import ParleyMessaging
import ParleyNet
import ParleyObservability
import ParleyWebSocket
import Synchronization

/// Sends deliveries to the connections of this instance: resolves the audience (member cache), looks up the
/// recipients' open connections and hands the one encoded frame to each, one hop per event loop.
final class FanOut: Sendable {
    let registry: ConnectionRegistry
    let members: MemberCache
    let logger: Logger
    let deliveries: Counter
    /// Sends `conversation` events after deliveries that change summaries (nil: none, in bare test gateways).
    let notifier: ConversationNotifier?
    /// A relay that routes by recipient (NATS) gets every delivery with its resolved users, for the other
    /// instances holding their sockets (nil: the relay broadcasts descriptors instead).
    private let route: (@Sendable (Delivery, [UInt8], [String]) -> Void)?

    init(
        registry: ConnectionRegistry, members: MemberCache, logger: Logger, metrics: MetricsRegistry,
        notifier: ConversationNotifier? = nil, route: (@Sendable (Delivery, [UInt8], [String]) -> Void)? = nil
    ) {
        self.registry = registry
        self.members = members
        self.logger = logger
        self.notifier = notifier
        self.route = route
        deliveries = metrics.counter(
            "parley_realtime_deliveries_total",
            help: "Event frames handed to gateway connections."
        ).labels()
    }

    /// Deliveries of conversations whose members are being loaded, in publish order: later events of the same
    /// conversation queue behind them, so that nobody receives a conversation's events out of order.
    private let waiting = Mutex<[MemberCache.Key: [Delivery]]>([:])

    /// Delivers at once on the calling thread when the audience is known without the database (1:1, users,
    /// cached groups): no hop to another thread between the commit and the recipients' loops. Otherwise the
    /// delivery waits, in order, for the members to load.
    func deliverNow(_ delivery: Delivery) {
        if delivery.membershipChanged {
            members.invalidate(appId: delivery.appId, conversationId: delivery.conversationId)
        }
        switch delivery.audience {
        case .user(let userId):
            send(delivery, to: [userId])
        case .users(let userIds):
            send(delivery, to: userIds)
        case .conversationMembers, .conversationMembersAnd:
            // 1:1 deliveries never wait (the id names both members), so none is ever queued ahead of another.
            if let pair = ConversationID.singleMembers(delivery.conversationId) {
                send(delivery, to: withExtra(pair, delivery.audience))
                return
            }
            let key = MemberCache.Key(appId: delivery.appId, conversationId: delivery.conversationId)
            if !waiting.withLock({ $0[key] != nil }),
                let userIds = members.cachedMembers(appId: delivery.appId, conversationId: delivery.conversationId)
            {
                send(delivery, to: withExtra(userIds, delivery.audience))
                return
            }
            let first = waiting.withLock { map -> Bool in
                if map[key] != nil {
                    map[key]!.append(delivery)
                    return false
                }
                map[key] = [delivery]
                return true
            }
            if first { Task(executorPreference: EventLoop.current) { await self.drainWaiting(key) } }
        }
    }

    /// Delivers a conversation's queued deliveries in order; the queue (even empty) keeps later ones behind the one
    /// being delivered, and goes when nothing is left.
    private func drainWaiting(_ key: MemberCache.Key) async {
        while true {
            let next = waiting.withLock { map -> Delivery? in
                guard var queue = map[key], !queue.isEmpty else {
                    map[key] = nil
                    return nil
                }
                let first = queue.removeFirst()
                map[key] = queue
                return first
            }
            guard let next else { return }
            await deliver(next)
        }
    }

    private func withExtra(_ userIds: [String], _ audience: MessagingEvent.Audience) -> [String] {
        guard case .conversationMembersAnd(let extra) = audience else { return userIds }
        var all = userIds
        for user in extra where !all.contains(user) { all.append(user) }
        return all
    }

    func deliver(_ delivery: Delivery) async {
        if delivery.membershipChanged {
            members.invalidate(appId: delivery.appId, conversationId: delivery.conversationId)
        }
        let userIds: [String]
        switch delivery.audience {
        case .user(let userId):
            userIds = [userId]
        case .users(let audience):
            userIds = audience
        case .conversationMembers, .conversationMembersAnd:
            do {
                userIds = withExtra(
                    try await members.members(appId: delivery.appId, conversationId: delivery.conversationId),
                    delivery.audience)
            } catch {
                // Clients recover by sync; say so in the log.
                logger.warning(
                    "fan-out could not load members",
                    [
                        "conversation": .string(delivery.conversationId),
                        "error": .string(String(describing: error)),
                    ])
                return
            }
        }
        send(delivery, to: userIds)
    }

    private func send(_ delivery: Delivery, to userIds: [String]) {
        var userIds = userIds
        if let excluded = delivery.excludedUserId { userIds.removeAll { $0 == excluded } }
        // With a routing relay every delivery here is this instance's own (other instances' arrive through
        // `deliverRouted`): the others get it now, resolved.
        var frame: [UInt8]?
        if let route {
            frame = delivery.frame
            route(delivery, frame!, userIds)
        }
        guard delivery.touchesSummary, let notifier else {
            broadcast(
                frame ?? delivery.frame,
                registry.connections(
                    appId: delivery.appId, userIds: userIds, excludingOrigin: delivery.origin))
            return
        }
        var online: [String] = []
        let handles = registry.connections(
            appId: delivery.appId, userIds: userIds, excludingOrigin: delivery.origin,
            online: { online.append($0) })
        broadcast(frame ?? delivery.frame, handles)
        // After the event itself: the summaries follow it.
        notifier.touched(appId: delivery.appId, conversationId: delivery.conversationId, userIds: online)
    }

    /// A delivery another instance stored and routed to one user here: its frame as it was encoded there.
    func deliverRouted(_ payload: UserDeliveryPayload) {
        guard payload.userId != payload.excludedUserId else { return }
        var online = false
        let handles = registry.connections(
            appId: payload.appId, userIds: CollectionOfOne(payload.userId), excludingOrigin: payload.origin,
            online: { _ in online = true })
        if !handles.isEmpty {
            deliveries.increment(by: handles.count)
            WebSocketSessionHandle.broadcast(encodedFrame: payload.frame, to: handles)
        }
        if payload.touchesSummary, online, let notifier {
            notifier.touched(appId: payload.appId, conversationId: payload.conversationId, userIds: [payload.userId])
        }
    }

    /// `frame` is evaluated only when somebody here receives it.
    private func broadcast(_ frame: @autoclosure () -> [UInt8], _ handles: [WebSocketSessionHandle]) {
        guard !handles.isEmpty else { return }
        deliveries.increment(by: handles.count)
        WebSocketSessionHandle.broadcast(encodedFrame: frame(), to: handles)
    }
}

import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyLifecycle
import ParleyMessaging
import ParleyNATS
import ParleyNet
import ParleyObservability
import ParleyPostgres
import ParleyWebSocket

/// The realtime gateway, assembled: `GET /ws` (IM token, then RFC 6455), delivery of messaging events to every
/// connected device, session-end notices, and the relay to the other instances of the deployment.
public final class RealtimeModule: Sendable {
    public let configuration: RealtimeConfiguration
    let gateway: Gateway
    let auth: AuthModule
    let messaging: MessagingModule
    let logger: Logger
    let online: OnlineState
    let presenceRepository: PresenceRepository
    /// Subscribed here, so no session that ends before the services run is missed.
    let sessionEvents: AsyncStream<SessionEvent>

    public init(
        configuration: RealtimeConfiguration, auth: AuthModule, messaging: MessagingModule,
        database: PostgresClient, logger: Logger, metrics: MetricsRegistry,
        frameHandlers: [String: FrameHandler] = [:], relayLoop: EventLoop? = nil
    ) {
        self.configuration = configuration
        self.auth = auth
        self.messaging = messaging
        online = OnlineState(database: database)
        presenceRepository = PresenceRepository(database: database)
        sessionEvents = auth.events.subscribe()
        let logger = logger.with("component", "realtime")
        self.logger = logger
        let relay = Self.makeRelay(
            configuration, database: database, messages: messaging.messages, loop: relayLoop, logger: logger,
            metrics: metrics)
        var userInterest: (@Sendable (ConnectionRegistry.UserKey, Bool) -> Void)?
        var route: (@Sendable (Delivery, [UInt8], [String]) -> Void)?
        if relay.routesByRecipient {
            userInterest = { key, present in relay.userInterest(appId: key.appId, userId: key.userId, present: present)
            }
            route = { delivery, frame, users in relay.route(delivery, frame: frame, to: users) }
        }
        let registry = ConnectionRegistry(userInterest: userInterest)
        let members = MemberCache(conversations: messaging.conversations)
        let notifier = ConversationNotifier(
            conversations: messaging.conversations, registry: registry, logger: logger, metrics: metrics)
        let fanOut = FanOut(
            registry: registry, members: members, logger: logger, metrics: metrics, notifier: notifier, route: route)
        relay.onDescriptors(ofKind: RelayDescriptor.membersChangedKind) { object in
            guard let appId = object["a"]?.int64Value, let conversationId = object["c"]?.stringValue else { return }
            members.invalidate(appId: appId, conversationId: conversationId)
        }
        var socketConfiguration = configuration.webSocket
        socketConfiguration.metrics = socketConfiguration.metrics ?? WebSocketMetrics(registry: metrics)
        var withMetrics = configuration
        withMetrics.webSocket = socketConfiguration
        let presence = ClusterPresence(database: database, logger: logger) {
            registry.all().map {
                .init(connectionId: $0.id, appId: $0.appId, userId: $0.userId, sessionId: $0.sessionId)
            }
        }
        let rooms = RoomService(
            configuration: configuration.rooms, repository: RoomRepository(database: database), relay: relay,
            messages: messaging.messages, instanceId: presence.instanceId, logger: logger)
        for kind in RoomDescriptor.kinds {
            relay.onDescriptors(ofKind: kind) { object in
                if let descriptor = RoomDescriptor.parse(object) { await rooms.received(descriptor) }
            }
        }
        let presenceHub = PresenceHub(
            instanceId: presence.instanceId, window: configuration.presenceCoalesceWindow,
            maxSubscriptionsPerUser: configuration.maxPresenceSubscriptions, repository: presenceRepository,
            cluster: presence, logger: logger, metrics: metrics, publish: { relay.publish(serialized: $0) })
        relay.onDescriptors(ofKind: PresenceDescriptor.kind) { object in
            if let descriptor = PresenceDescriptor(object) { presenceHub.received(descriptor) }
        }
        gateway = Gateway(
            configuration: withMetrics, messaging: messaging, registry: registry, fanOut: fanOut,
            relay: relay, presence: presence, presenceHub: presenceHub, logger: logger, frameHandlers: frameHandlers,
            rooms: rooms)
        metrics.gaugeFunction("parley_realtime_connections", help: "Open gateway connections on this instance.") {
            [([:], Double(registry.connectionCount))]
        }
    }

    static func makeRelay(
        _ configuration: RealtimeConfiguration, database: PostgresClient, messages: MessageService, loop: EventLoop?,
        logger: Logger, metrics: MetricsRegistry
    ) -> any ClusterRelay {
        switch configuration.relay {
        case .nats(let nats):
            guard let loop, let subjects = RelaySubjects(prefix: configuration.relaySubjectPrefix) else {
                preconditionFailure("a NATS relay needs an event loop and a valid subject prefix (checked at startup)")
            }
            var nats = nats
            nats.name = "parley"
            return NATSRelay(configuration: nats, subjects: subjects, loop: loop, logger: logger, metrics: metrics)
        case .postgres:
            return PostgresRelay(
                database: database, channel: configuration.clusterChannel, messages: messages, logger: logger,
                metrics: metrics)
        }
    }

    /// Online connections on this instance.
    public var connectionCount: Int { gateway.registry.connectionCount }

    /// `online` of `GET /api/admin/stats`.
    public var statisticsContributor: StatisticsContributor { online.statisticsContributor }

    public func register(on router: inout Router) {
        let gateway = gateway
        let authenticator = auth.authenticator
        let activeUsers = auth.statistics.activeUsers
        OnlineController(auth: auth, state: online).register(on: &router)
        if let rooms = gateway.rooms { RoomController(auth: auth, rooms: rooms).register(on: &router) }
        if let hub = gateway.presenceHub {
            PresenceController(authenticator: authenticator, repository: presenceRepository, hub: hub)
                .register(on: &router)
        }
        router.get("/ws") { request, context in
            let verified = try await authenticator.authenticate(
                request, audience: .im, consent: .required,
                from: .headerOrQuery)
            let principal = verified.principal
            activeUsers.record(appId: principal.appId, userId: principal.userId)
            let expiresAt = Date(timeIntervalSince1970: TimeInterval(verified.claims.exp))
            return try WebSocketServer.upgrade(
                request, configuration: gateway.configuration.webSocket,
                logger: context.logger
            ) { _ in
                GatewayConnection(gateway: gateway, principal: principal, tokenExpiresAt: expiresAt)
            }
        }
    }

    /// What the gateway runs while the server serves: presence (written, then heartbeated), delivery of local and
    /// other instances' events, the ends of sessions, and a safety net under the session events (which shed
    /// events when overloaded): every few seconds, connections whose session is known to have ended are ended.
    public func backgroundServices(coordinator: CoordinatorRole) -> [any Service] {
        let gateway = gateway
        var services: [any Service] = []
        if let presence = gateway.presence { services += [presence, presence.heartbeatService] }
        if let hub = gateway.presenceHub {
            // Another instance's users go offline here once its heartbeat is stale (at most this much later).
            services.append(
                PeriodicService("realtime presence instances", every: .seconds(5)) { await hub.checkInstances() })
        }
        services.append(EventDelivery(gateway: gateway, logger: logger))
        services.append(SessionEndListener(events: sessionEvents, registry: gateway.registry))
        services += gateway.rooms?.backgroundServices(coordinator: coordinator) ?? []
        let revocations = auth.revocations
        services.append(
            PeriodicService("realtime revocation check", every: .seconds(5)) {
                for entry in gateway.registry.all() where revocations.contains(entry.sessionId) {
                    Self.end(
                        EndedSession(
                            sessionId: entry.sessionId, userId: entry.userId, appId: entry.appId,
                            reason: .revoked, deviceModel: nil), registry: gateway.registry)
                }
            })
        return services
    }

    /// Closes every connection with 4003: the client reconnects and syncs what it may have missed.
    static func closeAllForResync(gateway: Gateway, logger: Logger, reason: String) {
        let connections = gateway.registry.all()
        logger.warning("asking clients to resync", ["reason": .string(reason), "connections": .int(connections.count)])
        for entry in connections { entry.handle.close(code: .resyncRequired, reason: "resync") }
    }

    /// Tells a session's connections why they end, then closes them.
    static func end(_ ended: EndedSession, registry: ConnectionRegistry) {
        let connections = registry.connections(appId: ended.appId, userId: ended.userId)
            .filter { $0.sessionId == ended.sessionId }
        guard !connections.isEmpty else { return }
        let frame: [UInt8]
        let code: WebSocketCloseCode
        let reason: String
        if let notice = ended.conflictNotice {
            frame = ServerFrame.encoded(
                type: "account_conflict",
                json: .object(
                    JSONObject([
                        // `device_model` too: seed 000 reads the OpenIM-era snake_case name.
                        ("deviceModel", .string(notice.deviceModel)), ("device_model", .string(notice.deviceModel)),
                        ("text", .string(notice.text)),
                    ])))
            code = .accountConflict
            reason = "account conflict"
        } else {
            frame = ServerFrame.encoded(
                type: "session_ended",
                json: .object(
                    JSONObject([
                        ("reason", .string(ended.reason.rawValue))
                    ])))
            code = .sessionEnded
            // The close reason is for clients that show it: a deleted account must not read as a plain logout.
            reason = ended.reason == .deleted ? "account deleted" : "session ended"
        }
        for entry in connections {
            entry.handle.perform { session in
                session.send(encodedFrame: frame)
                session.close(code: code, reason: reason)
            }
        }
    }

    /// This instance's id in `realtime_instances` (presence rows name it).
    public var instanceId: String? { gateway.presence?.instanceId }
}

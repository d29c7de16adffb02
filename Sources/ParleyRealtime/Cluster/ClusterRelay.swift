import ParleyJSON

/// How the instances of one deployment hear each other's events. Two transports:
///
/// - `PostgresRelay` (the default): LISTEN/NOTIFY on the one database, so nothing else needs running. Every
///   instance hears every event and resolves it itself (messages loaded by id, audiences from its member cache).
/// - `NATSRelay` (`PARLEY_RELAY=nats://...`): routed by interest. The instance that stored an event resolves its
///   recipients and publishes the encoded frame to each recipient's subject; an instance subscribes to the users
///   it holds sockets for and the chat rooms it has connections inside, so an event reaches only the instances
///   with a recipient, and none reads it back from the database.
///
/// Either way a lost feed (a reconnect after an outage) closes this instance's sockets with 4003: clients sync
/// what they missed, as after any reconnect.
protocol ClusterRelay: AnyObject, Sendable {
    var instanceId: String { get }

    /// Routes messaging deliveries by recipient: the fan-out hands every local delivery here with its resolved
    /// users (`route`), and only membership changes are broadcast. false: `publish` every event's descriptor.
    var routesByRecipient: Bool { get }

    /// A descriptor (`RelayDescriptor`, `PresenceDescriptor`, `RoomDescriptor`) for every other instance.
    func publish(serialized descriptor: [UInt8])

    /// A chat-room descriptor, for the instances with a connection inside the room.
    func publish(serialized descriptor: [UInt8], toRoom key: RoomKey)

    /// Sends `delivery` (stored here), encoded as `frame`, to the other instances holding sockets of `userIds`
    /// (routing relays only).
    func route(_ delivery: Delivery, frame: [UInt8], to userIds: [String])

    /// Hands other instances' descriptors of `kind` to `handler` (in order) instead of resolving them into
    /// deliveries.
    func onDescriptors(ofKind kind: String, _ handler: @escaping @Sendable (JSONObject) async -> Void)

    /// Interest, for routing relays, called in order on every change: the first socket of a user opened here
    /// (`present` true) or the last one closed; the first connection here entered a chat room or the last one
    /// left it.
    func userInterest(appId: Int64, userId: String, present: Bool)
    func roomInterest(_ key: RoomKey, present: Bool)

    /// Calls `ready` once other instances' events for the user reach this one: at once when they already do (a
    /// broadcast relay, or a user whose interest is in effect), else when the broker has confirmed the interest
    /// `userInterest` asked for, and in any case within the relay's bound. The gateway answers a new connection's
    /// requests only then: a client syncs after `hello`, so an event committed after that sync must arrive live.
    /// From any thread.
    func whenReceiving(appId: Int64, userId: String, _ ready: @escaping @Sendable () -> Void)

    /// Connects and returns once other instances' events reach this one (false if not within `timeout`; the feed
    /// still comes up by itself, and clients catch up through sync meanwhile); from then on they go to `sinks`.
    func start(timeout: Duration, sinks: RelaySinks) async -> Bool

    /// Reads other instances' events until cancelled, then disconnects.
    func run() async
}

/// Where a relay hands other instances' events.
struct RelaySinks: Sendable {
    /// A delivery to resolve here (broadcast relays).
    var deliver: @Sendable (Delivery) async -> Void
    /// A delivery routed to a user here, on the relay's thread, in order (routing relays).
    var deliverRouted: @Sendable (UserDeliveryPayload) -> Void
    /// Events may have been missed (the feed was lost and is back).
    var lostFeed: @Sendable () -> Void
}

extension ClusterRelay {
    func publish(_ descriptor: JSONValue) {
        publish(serialized: descriptor.serialized())
    }
}

import ParleyLifecycle
import ParleyNet
import ParleyObservability
import ParleyPostgres
import Synchronization

/// Delivers messaging events to the devices connected here: this instance's as each commit publishes them (inline,
/// and relayed to the other instances), and the other instances' as the relay receives them.
final class EventDelivery: Service {
    let gateway: Gateway
    let logger: Logger
    /// The other instances' events, subscribed to in `prepare` and read in `run`.
    private let feed = Mutex<AsyncStream<PostgresNotificationEvent>?>(nil)

    init(gateway: Gateway, logger: Logger) {
        self.gateway = gateway
        self.logger = logger
    }

    var name: String { "realtime delivery" }

    /// Observes the bus inline, on the thread that published (the request's event loop, right after the commit):
    /// no queue and no hop through another thread between a stored message and its recipients' loops. Then
    /// subscribes to the other instances' events and waits until PostgreSQL listens, so that nothing published
    /// after this instance starts serving is missed.
    func prepare() async {
        let gateway = gateway
        gateway.messaging.events.observe { event in
            gateway.fanOut.deliverNow(Delivery(event))
            if case .userEvent = event.payload {
                for descriptor in RelayDescriptor.describeUserEvent(event) {
                    gateway.relay.publish(serialized: descriptor)
                }
            } else {
                gateway.relay.publish(serialized: RelayDescriptor.describeSerialized(event))
            }
        }
        let (feed, listening) = await gateway.relay.subscribe(timeout: .seconds(10))
        if !listening {
            // The feed still comes up by itself; until then clients catch up through sync.
            logger.warning("serving before the cluster feed listens", ["waited_seconds": .int(10)])
        }
        self.feed.withLock { $0 = feed }
    }

    /// Other instances' events, until cancelled.
    func run() async {
        guard let feed = feed.withLock({ $0 }) else { return }
        let gateway = gateway
        let logger = logger
        await gateway.relay.run(
            feed,
            deliver: { await gateway.fanOut.deliver($0) },
            lostFeed: {
                // Events of other instances may be lost: clients must sync.
                gateway.fanOut.members.invalidateAll()
                RealtimeModule.closeAllForResync(gateway: gateway, logger: logger, reason: "cluster feed reconnected")
            })
    }
}

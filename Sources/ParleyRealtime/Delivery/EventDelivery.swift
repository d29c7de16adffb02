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

    init(gateway: Gateway, logger: Logger) {
        self.gateway = gateway
        self.logger = logger
    }

    var name: String { "realtime delivery" }

    /// Observes the bus inline, on the thread that published (the request's event loop, right after the commit):
    /// no queue and no hop through another thread between a stored message and its recipients' loops. Then
    /// starts the relay and waits until other instances' events reach this one, so that nothing published after
    /// this instance starts serving is missed.
    func prepare() async {
        let gateway = gateway
        let relay = gateway.relay
        gateway.messaging.events.observe { event in
            // A routing relay gets the delivery from the fan-out, with its resolved recipients.
            gateway.fanOut.deliverNow(Delivery(event))
            if relay.routesByRecipient {
                // The other instances' member caches must forget the conversation's members.
                if event.membershipChanged {
                    relay.publish(
                        RelayDescriptor.membersChanged(appId: event.appId, conversationId: event.conversationId))
                }
            } else if case .userEvent = event.payload {
                for descriptor in RelayDescriptor.describeUserEvent(event) { relay.publish(serialized: descriptor) }
            } else {
                relay.publish(serialized: RelayDescriptor.describeSerialized(event))
            }
        }
        let logger = logger
        let sinks = RelaySinks(
            deliver: { await gateway.fanOut.deliver($0) },
            deliverRouted: { gateway.fanOut.deliverRouted($0) },
            lostFeed: {
                // Events of other instances may be lost: clients must sync.
                gateway.fanOut.members.invalidateAll()
                RealtimeModule.closeAllForResync(gateway: gateway, logger: logger, reason: "cluster feed reconnected")
            })
        let started = await relay.start(timeout: .seconds(10), sinks: sinks)
        if !started {
            // The feed still comes up by itself; until then clients catch up through sync.
            logger.warning("serving before the cluster feed is up", ["waited_seconds": .int(10)])
        }
    }

    /// Other instances' events, until cancelled.
    func run() async {
        await gateway.relay.run()
    }
}

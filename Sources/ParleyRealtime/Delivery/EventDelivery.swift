import ParleyLifecycle
import ParleyNet
import ParleyObservability

/// Delivers messaging events to the devices connected here: this instance's as each commit publishes them (inline,
/// and relayed to the other instances), and the other instances' as the relay receives them.
struct EventDelivery: Service {
    let gateway: Gateway
    let logger: Logger

    var name: String { "realtime delivery" }

    /// Observes the bus inline, on the thread that published (the request's event loop, right after the commit):
    /// no queue and no hop through another thread between a stored message and its recipients' loops.
    func prepare() {
        let gateway = gateway
        gateway.messaging.events.observe { event in
            gateway.fanOut.deliverNow(Delivery(event))
            gateway.relay.publish(serialized: RelayDescriptor.describeSerialized(event))
        }
    }

    /// Other instances' events, until cancelled.
    func run() async {
        let gateway = gateway
        let logger = logger
        await gateway.relay.run(
            deliver: { await gateway.fanOut.deliver($0) },
            lostFeed: {
                // Events of other instances may be lost: clients must sync.
                gateway.fanOut.members.invalidateAll()
                RealtimeModule.closeAllForResync(gateway: gateway, logger: logger, reason: "cluster feed reconnected")
            })
    }
}

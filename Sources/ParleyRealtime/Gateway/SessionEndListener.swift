import ParleyAuth
import ParleyLifecycle
import ParleyNet

/// Ends the connections of each session as it ends, on whichever instance it ended (`SessionEvents` carries them
/// all), telling the client why first.
struct SessionEndListener: Service {
    /// Subscribed when the module is built, so no session that ends before this runs is missed.
    let events: AsyncStream<SessionEvent>
    let registry: ConnectionRegistry

    var name: String { "realtime session-end listener" }

    func run() async {
        for await event in events {
            guard case .sessionEnded(let ended) = event else { continue }
            RealtimeModule.end(ended, registry: registry)
        }
    }
}

import ParleyAuth
import ParleyLifecycle
import ParleyNet
import ParleyObservability

/// Unbinds the push tokens of each session as it ends, on whichever instance it ended (`SessionEvents` carries them
/// all). The token sweep and the delivery query's active-session filter cover what this misses.
struct EndedSessionUnbinder: Service {
    /// Subscribed when the module is built, so no session that ends before this runs is missed.
    let events: AsyncStream<SessionEvent>
    let tokens: PushTokenRepository
    let logger: Logger

    var name: String { "push token unbinder" }

    func run() async {
        for await event in events {
            guard case .sessionEnded(let session) = event else { continue }
            do {
                try await tokens.unbindEndedSession(session.sessionId)
            } catch {
                logger.warning(
                    "unbinding an ended session's push tokens failed; the sweep will",
                    ["error": .string(String(describing: error))])
            }
        }
    }
}

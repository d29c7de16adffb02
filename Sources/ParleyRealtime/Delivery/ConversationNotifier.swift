import ParleyMessaging
import ParleyNet
import ParleyObservability
import ParleyWebSocket
import Synchronization

/// OpenIM's `onConversationChanged`: after a message, revoke, edit or read reaches the devices connected here, their
/// users get a `conversation` event with their summary as it is now (unread count, read points, latest message).
///
/// The cost is kept off the per-member path: the conversations a delivery touched are noted per online user (one
/// lock, no I/O, on the delivering thread), and one flush at a time reads every noted (conversation, user) pair's
/// summary in one statement per app (`ConversationService.summaries`: unread is two index probes per pair), then
/// sends each user's frame. A 2,000-member group message costs a few statements for the members online on this
/// instance, not a query per member; a burst in one conversation collapses into one summary per member per flush,
/// and flushes are at least `minimumInterval` apart. Each instance does this for its own connections, from the
/// events it delivers (its own and the relayed ones), so it works across instances like every other event.
final class ConversationNotifier: Sendable {
    /// Summaries wait this long for more changes to the same conversations: a busy conversation costs its members
    /// a few summaries a second, not one per message (the `message` event itself goes out at once).
    static let minimumInterval: Duration = .milliseconds(250)
    /// Pairs per statement: a large flush is split, with a yield between the parts, so no loop spends long on one.
    static let maxPairsPerStatement = 200

    private struct Pending {
        var pairs: [Int64: Set<Pair>] = [:]
        var flushing = false
    }

    struct Pair: Hashable, Sendable {
        var conversationId: String
        var userId: String
    }

    private let conversations: ConversationService
    private let registry: ConnectionRegistry
    private let logger: Logger
    private let statements: Counter
    private let pending = Mutex(Pending())

    init(
        conversations: ConversationService, registry: ConnectionRegistry, logger: Logger, metrics: MetricsRegistry
    ) {
        self.conversations = conversations
        self.registry = registry
        self.logger = logger
        statements = metrics.counter(
            "parley_realtime_conversation_summary_queries_total",
            help: "Statements reading conversation summaries for conversation events (one per app per flush)."
        ).labels()
    }

    /// Notes that `userIds` (online here) should get `conversationId`'s new summary.
    func touched(appId: Int64, conversationId: String, userIds: [String]) {
        guard !userIds.isEmpty else { return }
        let startFlush = pending.withLock { state -> Bool in
            for userId in userIds {
                state.pairs[appId, default: []].insert(Pair(conversationId: conversationId, userId: userId))
            }
            if state.flushing { return false }
            state.flushing = true
            return true
        }
        // On the delivering loop: the query uses that loop's pool and its rows are decoded where they arrive, the
        // frames to that loop's connections go out without a hop (the cooperative pool would wake every loop).
        if startFlush { Task(executorPreference: EventLoop.current) { await self.flush() } }
    }

    private func flush() async {
        while true {
            let batch = pending.withLock { state -> [Int64: Set<Pair>] in
                let taken = state.pairs
                state.pairs.removeAll(keepingCapacity: true)
                if taken.isEmpty { state.flushing = false }
                return taken
            }
            guard !batch.isEmpty else { return }
            for (appId, pairs) in batch {
                let all = Array(pairs)
                var start = 0
                while start < all.count {
                    let chunk = all[start..<min(all.count, start + Self.maxPairsPerStatement)]
                    await send(appId: appId, chunk.map { ($0.conversationId, $0.userId) })
                    start += chunk.count
                    await Task.yield()
                }
            }
            try? await Task.sleep(for: Self.minimumInterval)
        }
    }

    private func send(appId: Int64, _ pairs: [(conversationId: String, userId: String)]) async {
        let summaries: [(userId: String, summary: ConversationSummary)]
        do {
            statements.increment()
            summaries = try await conversations.summaries(appId: appId, pairs: pairs)
        } catch {
            // The list (`GET /api/im/conversations`) is still right; only this push of it is lost.
            logger.warning(
                "could not load conversation summaries for conversation events",
                ["pairs": .int(pairs.count), "error": .string(String(describing: error))])
            return
        }
        for (userId, summary) in summaries {
            let handles = registry.connections(appId: appId, userIds: CollectionOfOne(userId), excludingOrigin: nil)
            guard !handles.isEmpty else { continue }
            WebSocketSessionHandle.broadcast(
                encodedFrame: ServerFrame.encoded(type: "conversation", encodable: summary), to: handles)
        }
    }
}

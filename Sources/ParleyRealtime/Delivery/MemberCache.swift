import ParleyMessaging
import Synchronization

/// Conversation members for fan-out, cached per group conversation (1:1 members come from the id itself).
/// Membership changes invalidate an entry (local events and other instances' alike); entries also expire
/// after `maxAge` in case an invalidation was missed, and the cache is bounded.
final class MemberCache: Sendable {
    struct Key: Hashable, Sendable {
        var appId: Int64
        var conversationId: String
    }

    private struct Entry {
        var members: [String]
        var loadedAt: ContinuousClock.Instant
    }

    private let conversations: ConversationService
    private let entries = Mutex<[Key: Entry]>([:])
    let maxAge: Duration
    let maxEntries: Int

    init(conversations: ConversationService, maxAge: Duration = .seconds(60), maxEntries: Int = 50_000) {
        self.conversations = conversations
        self.maxAge = maxAge
        self.maxEntries = maxEntries
    }

    /// The members when known without the database (a 1:1 id names them; a group's fresh cache entry); nil when
    /// they must be loaded.
    func cachedMembers(appId: Int64, conversationId: String) -> [String]? {
        if let single = ConversationID.singleMembers(conversationId) { return single }
        let key = Key(appId: appId, conversationId: conversationId)
        guard let cached = entries.withLock({ $0[key] }), ContinuousClock.now - cached.loadedAt < maxAge else {
            return nil
        }
        return cached.members
    }

    func members(appId: Int64, conversationId: String) async throws -> [String] {
        if let known = cachedMembers(appId: appId, conversationId: conversationId) { return known }
        let key = Key(appId: appId, conversationId: conversationId)
        let now = ContinuousClock.now
        let members = try await conversations.memberIDs(appId: appId, conversationId: conversationId)
        entries.withLock { map in
            if map.count >= maxEntries { map.removeAll(keepingCapacity: true) }
            map[key] = Entry(members: members, loadedAt: now)
        }
        return members
    }

    func invalidate(appId: Int64, conversationId: String) {
        _ = entries.withLock { $0.removeValue(forKey: Key(appId: appId, conversationId: conversationId)) }
    }

    func invalidateAll() {
        entries.withLock { $0.removeAll() }
    }
}

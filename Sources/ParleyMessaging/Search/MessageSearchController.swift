import ParleyAuth
import ParleyHTTP
import ParleyPostgres

/// `GET /api/im/search`: the caller's messages that hold a word or phrase, newest first.
struct MessageSearchController: Sendable {
    let authenticator: Authenticator
    let repository: MessageSearchRepository
    let conversations: ConversationService
    /// Search tolerates replica lag (the index itself trails the messages).
    let reads: PostgresReadRouter

    func register(on router: inout Router) {
        let repository = repository
        let conversations = conversations
        let reads = reads
        router.get(
            "/api/im/search",
            authenticator.protect { request, _, principal in
                let query = try MessageSearchQuery(request.query)
                return .ok(
                    try await reads.read { database in
                        // One conversation: the caller must belong to it, answered as history answers (1101).
                        if let id = query.conversationId {
                            _ = try await conversations.requireMembership(id, of: principal, on: database)
                        }
                        return try await repository.on(database).search(
                            query, appId: principal.appId, userId: principal.userId)
                    })
            })
    }
}

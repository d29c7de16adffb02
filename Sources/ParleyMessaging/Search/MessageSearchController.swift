import ParleyAuth
import ParleyHTTP

/// `GET /api/im/search`: the caller's messages that hold a word or phrase, newest first.
struct MessageSearchController: Sendable {
    let authenticator: Authenticator
    let repository: MessageSearchRepository
    let conversations: ConversationService

    func register(on router: inout Router) {
        let repository = repository
        let conversations = conversations
        router.get(
            "/api/im/search",
            authenticator.protect { request, _, principal in
                let query = try MessageSearchQuery(request.query)
                // One conversation: the caller must belong to it, answered as history answers (1101).
                if let id = query.conversationId { _ = try await conversations.requireMembership(id, of: principal) }
                return .ok(try await repository.search(query, appId: principal.appId, userId: principal.userId))
            })
    }
}

import ParleyAuth
import ParleyHTTP

/// The caller's conversation list and per-conversation operations, history included.
struct ConversationController: Sendable {
    let authenticator: Authenticator
    let service: ConversationService

    static let bodyLimit = RouteOptions(bodyLimit: 64 * 1024)

    func register(on router: inout Router) {
        let service = service
        router.get(
            "/api/im/conversations",
            authenticator.protect { request, _, principal in
                let paging = try Paging(request, defaultLimit: 50, maxLimit: ConversationService.maxPageSize)
                let page = try await service.list(for: principal, offset: paging.offset, limit: paging.limit)
                return .ok(
                    ConversationPage(
                        conversations: page.conversations, hasMore: page.hasMore, totalUnread: page.totalUnread))
            })
        router.get(
            "/api/im/conversations/{id}",
            authenticator.protect { _, context, principal in
                let id = try MessagingInput.conversationID(try context.parameter("id")).id
                return .ok(try await service.summary(id, for: principal))
            })
        router.patch(
            "/api/im/conversations/{id}", options: Self.bodyLimit,
            authenticator.protect { request, context, principal in
                let id = try MessagingInput.conversationID(try context.parameter("id")).id
                let body = try request.decodeJSON(ConversationService.UpdateRequest.self)
                return .ok(try await service.update(id, body, for: principal))
            })
        router.delete(
            "/api/im/conversations/{id}",
            authenticator.protect { _, context, principal in
                let id = try MessagingInput.conversationID(try context.parameter("id")).id
                return .ok(
                    ClearResult(
                        conversationId: id, clearSeq: try await service.remove(id, deleting: true, for: principal)))
            })
        router.post(
            "/api/im/conversations/{id}/read",
            authenticator.protect { request, context, principal in
                let id = try MessagingInput.conversationID(try context.parameter("id")).id
                let body = try request.decodeJSON(ReadRequest.self)
                guard body.seq >= 0 else { throw APIError.validationFailed.with(message: "`seq` must be 0 or more") }
                return .ok(try await service.markRead(id, seq: body.seq, for: principal))
            })
        router.post(
            "/api/im/conversations/{id}/unread",
            authenticator.protect { _, context, principal in
                let id = try MessagingInput.conversationID(try context.parameter("id")).id
                return .ok(try await service.markUnread(id, for: principal))
            })
        router.post(
            "/api/im/conversations/{id}/clear",
            authenticator.protect { _, context, principal in
                let id = try MessagingInput.conversationID(try context.parameter("id")).id
                return .ok(
                    ClearResult(
                        conversationId: id, clearSeq: try await service.remove(id, deleting: false, for: principal)))
            })
        router.get(
            "/api/im/conversations/{id}/messages",
            authenticator.protect { request, context, principal in
                let id = try MessagingInput.conversationID(try context.parameter("id")).id
                let query = try HistoryQuery(request.query, maxLimit: ConversationService.maxPageSize)
                let page = try await service.history(id, query, for: principal)
                return .ok(MessagePage(messages: page.messages, hasMore: page.hasMore))
            })
    }
}

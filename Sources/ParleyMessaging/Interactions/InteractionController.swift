import ParleyAuth
import ParleyHTTP

/// Reactions, pins and delete-for-me routes.
struct InteractionController: Sendable {
    let authenticator: Authenticator
    let service: InteractionService
    let conversations: ConversationService

    /// `GET /api/im/conversations/{id}/pins`.
    struct PinList: Encodable {
        var pins: [PinnedMessage]
    }

    struct DeletedForMe: Encodable {
        var conversationId: String
        var msgId: String
    }

    func register(on router: inout Router) {
        let service = service
        let conversations = conversations
        for adding in [true, false] {
            let handler = authenticator.protect { _, context, principal in
                let id = try MessagingInput.messageID(try context.parameter("id"))
                return .ok(
                    try await service.react(
                        messageId: id, emoji: try context.parameter("emoji"), adding: adding, by: principal))
            }
            if adding {
                router.put("/api/im/messages/{id}/reactions/{emoji}", handler)
            } else {
                router.delete("/api/im/messages/{id}/reactions/{emoji}", handler)
            }
        }
        for pinning in [true, false] {
            let handler = authenticator.protect { _, context, principal in
                let id = try MessagingInput.messageID(try context.parameter("id"))
                return .ok(try await service.pin(messageId: id, pinning: pinning, by: principal))
            }
            if pinning {
                router.put("/api/im/messages/{id}/pin", handler)
            } else {
                router.delete("/api/im/messages/{id}/pin", handler)
            }
        }
        router.get(
            "/api/im/conversations/{id}/pins",
            authenticator.protect { _, context, principal in
                let id = try MessagingInput.conversationID(try context.parameter("id")).id
                return .ok(PinList(pins: try await service.pins(id, for: principal, conversations: conversations)))
            })
        router.delete(
            "/api/im/messages/{id}",
            authenticator.protect { _, context, principal in
                let id = try MessagingInput.messageID(try context.parameter("id"))
                let deleted = try await service.deleteForMe(messageId: id, by: principal)
                return .ok(DeletedForMe(conversationId: deleted.conversationId, msgId: deleted.msgId))
            })
    }
}

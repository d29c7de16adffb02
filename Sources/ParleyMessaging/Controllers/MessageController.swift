import ParleyAuth
import ParleyHTTP

/// `POST /api/im/messages`, revoke and edit.
struct MessageController: Sendable {
    let authenticator: Authenticator
    let service: MessageService

    static let bodyLimit = RouteOptions(bodyLimit: MessagingConfiguration.maxSendRequestBytes)

    func register(on router: inout Router) {
        let service = service
        router.post(
            "/api/im/messages", options: Self.bodyLimit,
            authenticator.protect { request, _, principal in
                let body = try MessageService.SendRequest.parse(request.bodyBytes)
                let sent = try await service.send(body, from: principal)
                return .ok(json: sent.json, status: sent.created ? 201 : 200)
            })
        router.get(
            "/api/im/messages/{id}",
            authenticator.protect { _, context, principal in
                let id = try MessagingInput.messageID(try context.parameter("id"))
                return .ok(json: try await service.message(id, for: principal).jsonBytes())
            })
        router.post(
            "/api/im/messages/revoke",
            authenticator.protect { request, _, principal in
                let target = try RevokeTarget(try request.jsonObject(), prefix: "")
                return .ok(json: try await service.revoke(target, by: principal).jsonBytes())
            })
        router.post(
            "/api/im/messages/{id}/revoke",
            authenticator.protect { _, context, principal in
                let id = try MessagingInput.messageID(try context.parameter("id"))
                return .ok(json: try await service.revoke(messageId: id, by: principal).jsonBytes())
            })
        router.patch(
            "/api/im/messages/{id}", options: Self.bodyLimit,
            authenticator.protect { request, context, principal in
                let id = try MessagingInput.messageID(try context.parameter("id"))
                let body = try request.decodeJSON(MessageService.EditRequest.self)
                return .ok(json: try await service.edit(messageId: id, body, by: principal).jsonBytes())
            })
    }
}

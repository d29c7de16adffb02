import ParleyAuth
import ParleyHTTP
import ParleyJSON

/// `/api/admin/messages...` and `/api/admin/conversations/{id}/clear`: server-to-server routes signed with the app
/// secret (see "Signed server-to-server requests" in openapi.yaml), each acting in the signing app only.
struct AdminMessageController: Sendable {
    let auth: AuthModule
    let service: AdminMessageService
    let jobs: BroadcastJobs

    /// A broadcast names up to 1,000 user ids besides the message.
    static let bodyLimit = RouteOptions(bodyLimit: MessagingConfiguration.maxSendRequestBytes + 80 * 1024)

    func register(on router: inout Router) {
        let auth = auth
        let service = service
        let jobs = jobs
        router.post("/api/admin/messages", options: Self.bodyLimit) { request, _ in
            let app = try await auth.verifySignedRequest(request)
            let body = try request.decodeJSON(AdminMessageService.SendRequest.self)
            let sent = try await service.send(body, appId: app.id)
            return .ok(json: sent.message.jsonBytes(), status: !sent.stored ? 202 : sent.created ? 201 : 200)
        }
        router.post("/api/admin/messages/broadcast", options: Self.bodyLimit) { request, _ in
            let app = try await auth.verifySignedRequest(request)
            let body = try request.decodeJSON(AdminMessageService.BroadcastRequest.self)
            let results = try await service.broadcast(body, appId: app.id)
            let sent = results.count { $0.status == "sent" }
            return .ok(AdminBroadcastAnswer(results: results, sent: sent, failed: results.count - sent))
        }
        router.post("/api/admin/messages/broadcast/all", options: Self.bodyLimit) { request, _ in
            let app = try await auth.verifySignedRequest(request)
            let body = try request.decodeJSON(AdminMessageService.BroadcastRequest.self)
            return .ok(try await jobs.create(body, appId: app.id), status: 202)
        }
        router.get("/api/admin/messages/broadcast/{jobId}") { request, context in
            let app = try await auth.verifySignedRequest(request)
            return .ok(try await jobs.job(try context.parameter("jobId"), appId: app.id))
        }
        router.post("/api/admin/messages/{id}/revoke", options: RouteOptions(bodyLimit: 4096)) { request, context in
            let app = try await auth.verifySignedRequest(request)
            let id = try MessagingInput.messageID(try context.parameter("id"))
            let body =
                try request.decodeJSON(AdminRevokeRequest.self, ifEmpty: AdminRevokeRequest())
            return .ok(
                json: try await service.revoke(messageId: id, operatorId: body.operatorId, appId: app.id).jsonBytes())
        }
        router.post("/api/admin/conversations/{id}/clear") { request, context in
            let app = try await auth.verifySignedRequest(request)
            let conversationId = try context.parameter("id")
            let cleared = try await service.clear(conversationId: conversationId, appId: app.id)
            return .ok(
                AdminClearAnswer(conversationId: conversationId, clearSeq: cleared.clearSeq, members: cleared.members))
        }
    }
}

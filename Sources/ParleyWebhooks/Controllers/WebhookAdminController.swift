import ParleyAuth
import ParleyHTTP

/// The app's view of its webhooks, for its backend: server-to-server routes signed with the app secret (see
/// "Signed server-to-server requests" in openapi.yaml), each acting on the signing app only.
struct WebhookAdminController: Sendable {
    let auth: AuthModule
    let settings: WebhookSettingsRepository
    let jobs: WebhookJobRepository

    static let maxPageSize = 500

    func register(on router: inout Router) {
        let auth = auth
        let settings = settings
        let jobs = jobs
        router.get("/api/admin/webhooks") { request, _ in
            let app = try await auth.verifySignedRequest(request)
            guard let current = try await settings.settings(appId: app.id) else {
                throw APIError.webhookNotConfigured
            }
            return .ok(current)
        }
        router.get("/api/admin/webhooks/deliveries") { request, _ in
            let app = try await auth.verifySignedRequest(request)
            let query = request.query
            let state = try Self.state(query.value(for: "state"))
            let limit = try query.limit(defaultLimit: 100, max: Self.maxPageSize)
            let cursor = try query.positiveID(for: "cursor")
            let deliveries = try await jobs.list(appId: app.id, state: state, limit: limit + 1, after: cursor)
            let page = Array(deliveries.prefix(limit))
            return .ok(
                WebhookDeliveryPage(
                    deliveries: page, nextCursor: deliveries.count > limit ? page.last?.id : nil))
        }
        router.post("/api/admin/webhooks/deliveries/{id}/retry") { request, context in
            let app = try await auth.verifySignedRequest(request)
            let raw = try context.parameter("id")
            guard let id = Self.identifier(Substring(raw)) else { throw APIError.webhookDeliveryNotFound }
            switch try await jobs.retry(appId: app.id, id: id) {
            case .retried(let delivery): return .ok(delivery)
            case .notFound: throw APIError.webhookDeliveryNotFound
            case .notDead: throw APIError.webhookDeliveryNotDead
            }
        }
    }

    static func state(_ raw: Substring?) throws(APIError) -> WebhookDelivery.State {
        guard let raw else { return .pending }
        guard let state = WebhookDelivery.State(rawValue: String(raw)) else {
            throw APIError.validationFailed.with(message: "`state` must be pending, dead or delivered")
        }
        return state
    }

    /// A delivery id: a positive decimal integer.
    static func identifier(_ raw: Substring) -> Int64? {
        guard raw.utf8.count <= 18, raw.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let id = Int64(raw), id > 0
        else { return nil }
        return id
    }
}

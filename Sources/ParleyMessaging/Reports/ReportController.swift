import ParleyAuth
import ParleyHTTP

/// `POST /api/im/reports`: 201 with the new report, 200 with the one the caller already filed on that target.
struct ReportController: Sendable {
    let authenticator: Authenticator
    let service: ReportService

    static let bodyLimit = RouteOptions(bodyLimit: 16 * 1024)

    func register(on router: inout Router) {
        let service = service
        router.post(
            "/api/im/reports", options: Self.bodyLimit,
            authenticator.protect { request, _, principal in
                let body = try request.decodeJSON(ReportRequest.self)
                let (report, created) = try await service.report(
                    targetType: body.targetType, targetId: body.targetId, reason: body.reason, note: body.note,
                    by: principal)
                return .ok(report, status: created ? 201 : 200)
            })
    }
}

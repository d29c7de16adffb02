import ParleyAuth
import ParleyHTTP

/// `GET /api/admin/reports`: the reports the signing app's users filed (`POST /api/im/reports`), newest first, for
/// the app's moderators (`parley app reports` shows the same to an operator).
struct AdminReportController: Sendable {
    let auth: AuthModule
    let reports: ReportRepository

    static let defaultLimit = 50
    static let maxLimit = 200

    func register(on router: inout Router) {
        let auth = auth
        let reports = reports
        router.get("/api/admin/reports") { request, _ in
            let app = try await auth.verifySignedRequest(request)
            let query = request.query
            let limit = try query.limit(defaultLimit: Self.defaultLimit, max: Self.maxLimit)
            let cursor = try query.positiveID(for: "cursor")
            var targetType: ReportTargetType?
            if let raw = try query.value(for: "targetType") {
                guard let type = ReportTargetType(rawValue: String(raw)) else {
                    throw APIError.validationFailed.with(message: "`targetType` must be user, message or group")
                }
                targetType = type
            }
            let found = try await reports.list(appId: app.id, limit: limit + 1, before: cursor, targetType: targetType)
            let page = Array(found.prefix(limit))
            return .ok(AdminReportPage(reports: page, nextCursor: found.count > limit ? page.last?.id : nil))
        }
    }
}

/// A page of `GET /api/admin/reports`; `nextCursor` (null on the last page) is the `cursor` of the next one.
struct AdminReportPage: Encodable, Sendable {
    var reports: [Report]
    var nextCursor: String?

    enum CodingKeys: String, CodingKey { case reports, nextCursor }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reports, forKey: .reports)
        try container.encode(nextCursor, forKey: .nextCursor) // an explicit null: clients see every field
    }
}

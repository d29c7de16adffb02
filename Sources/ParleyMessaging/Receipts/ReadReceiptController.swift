import ParleyAuth
import ParleyHTTP

/// `GET /api/im/messages/{id}/reads`.
struct ReadReceiptController: Sendable {
    let authenticator: Authenticator
    let receipts: ReadReceipts

    func register(on router: inout Router) {
        let receipts = receipts
        router.get(
            "/api/im/messages/{id}/reads",
            authenticator.protect { request, context, principal in
                let id = try MessagingInput.messageID(try context.parameter("id"))
                let query = request.query
                var cursor: String?
                if let raw = try query.value(for: "cursor"), !raw.isEmpty {
                    cursor = try MessagingInput.userID(String(raw), field: "cursor")
                }
                let limit = try query.limit(defaultLimit: 50, max: ReadReceipts.maxPageSize)
                return .ok(try await receipts.readers(of: id, after: cursor, limit: limit, for: principal))
            })
    }
}

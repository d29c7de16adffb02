import ParleyAuth
import ParleyHTTP
import ParleyJSON

/// `POST /api/admin/online {userIds}`: which of these users of the signing app are online now, on any instance,
/// and on which platforms. Signed like every admin route.
struct OnlineController: Sendable {
    let auth: AuthModule
    let state: OnlineState

    static let maxUsers = 100

    func register(on router: inout Router) {
        let auth = auth
        let state = state
        router.post("/api/admin/online", options: RouteOptions(bodyLimit: 64 * 1024)) { request, _ in
            let app = try await auth.verifySignedRequest(request)
            let userIds = try Self.userIDs(request.bodyBytes)
            return .ok(["users": try await state.users(appId: app.id, userIds: userIds)])
        }
    }

    /// `{userIds: [...]}`: 1 to 100 user ids, repeats asked once.
    static func userIDs(_ bytes: [UInt8]) throws(APIError) -> [String] {
        guard !bytes.isEmpty else { throw APIError.invalidJSON.with(message: "request body is empty; expected JSON") }
        let body: JSONValue
        do {
            body = try JSONValue.parse(bytes)
        } catch {
            throw APIError.invalidJSON
        }
        guard case .array(let values)? = body["userIds"], (1...maxUsers).contains(values.count) else {
            throw APIError.validationFailed.with(message: "`userIds` must list 1 to \(maxUsers) user ids")
        }
        var seen = Set<String>()
        var ids: [String] = []
        for value in values {
            guard case .string(let id) = value, Validation.isValidUserID(id) else {
                throw APIError.validationFailed.with(message: "`userIds` must hold user ids (1-64 of [A-Za-z0-9_.@-])")
            }
            if seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }
}

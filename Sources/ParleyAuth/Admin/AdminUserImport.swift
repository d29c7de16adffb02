import ParleyHTTP
import ParleyJSON

/// `POST /api/admin/users`: `{users: [{userId, nickname?, avatar?, signature?, ex?, searchable?}]}`, 1 to 100 users
/// (a user listed twice is changed twice, in the order listed). The whole body is checked before anything is stored (1001/1002 naming the user's index), so a
/// malformed request changes nothing; what can only fail for one user (a deleted account, an avatar the user may
/// not use) fails that user alone.
struct AdminUserImport: Sendable {
    static let maxUsers = 100

    struct Item: Sendable {
        var userId: String
        var profile: ProfileUpdate
    }

    var items: [Item]

    init(body bytes: [UInt8]) throws(APIError) {
        guard case .object(let body) = try AuthInput.jsonBody(bytes) else {
            throw APIError.validationFailed.with(message: "request body must be a JSON object")
        }
        guard case .array(let users)? = body["users"] else {
            throw APIError.validationFailed.with(message: "`users` must be an array of users")
        }
        guard (1...Self.maxUsers).contains(users.count) else {
            throw APIError.validationFailed.with(message: "`users` must list 1 to \(Self.maxUsers) users")
        }
        items = []
        for (index, value) in users.enumerated() {
            let field = "users[\(index)]"
            guard case .object(let user) = value else {
                throw APIError.validationFailed.with(message: "`\(field)` must be an object")
            }
            guard case .string(let rawID)? = user["userId"] else {
                throw APIError.validationFailed.with(message: "`\(field).userId` must be a user id")
            }
            let userId = try AuthInput.newUserID(rawID, field: "\(field).userId")
            let profile: ProfileUpdate
            do {
                profile = try ProfileUpdate(fields: user)
            } catch {
                throw error.with(message: "`\(field)`: " + error.message)
            }
            items.append(Item(userId: userId, profile: profile))
        }
    }
}

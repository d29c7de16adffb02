import ParleyHTTP
import ParleyObservability
import ParleyPostgres

/// What the admin user routes do, each within the signing app. The account flows are the ones users and the CLI
/// already go through: a ban is `AccountBans`' (sessions end with `banned`, logins answer 1043), a deletion is
/// `AccountDeletion`'s (the same as `DELETE /api/users/me`), a profile change records the `profile` event as a
/// user's own change does, and imported users are managed by the app as signed-login users are.
struct AdminUserService: Sendable {
    let services: AuthServices
    let bans: AccountBans

    init(services: AuthServices) {
        self.services = services
        bans = AccountBans(database: services.users.database)
    }

    // MARK: Import

    /// Creates or updates every user of `request` in one transaction (in id order, so concurrent imports never
    /// deadlock); a user that cannot be changed (deleted, an avatar it may not use) fails alone.
    func importUsers(_ request: AdminUserImport, app: AppSettings, logger: Logger) async throws
        -> [AdminImportResult]
    {
        var results = [AdminImportResult?](repeating: nil, count: request.items.count)
        var ready: [(index: Int, item: AdminUserImport.Item)] = []
        for (index, var item) in request.items.enumerated() {
            do {
                item.profile.avatar = try await checkedAvatar(item.profile.avatar, appId: app.id, userId: item.userId)
                ready.append((index, item))
            } catch {
                results[index] = Self.failure(item.userId, APIError.mapping(error, logger: logger))
            }
        }
        // By id, then as listed: a user listed twice is changed in the order sent.
        ready.sort { ($0.item.userId, $0.index) < ($1.item.userId, $1.index) }
        let users = services.users
        let recorder = services.profileChanges
        let (done, afterCommit) = try await users.database.withTransaction { connection in
            var done: [(Int, AdminImportResult)] = []
            var afterCommit: [@Sendable () -> Void] = []
            for (index, item) in ready {
                if try await users.insertManaged(
                    on: connection, appId: app.id, userId: item.userId, profile: item.profile,
                    consentedVersion: app.privacyVersion)
                {
                    done.append((index, AdminImportResult(userId: item.userId, status: .created)))
                    continue
                }
                guard let user = try await users.lockForLogin(on: connection, appId: app.id, userId: item.userId),
                    user.deletedAt == nil
                else {
                    done.append((index, Self.failure(item.userId, .accountDeleted)))
                    continue
                }
                let (_, publish) = try await services.updateProfile(
                    item.profile, appId: app.id, userId: item.userId, origin: nil, on: connection,
                    users: users, recorder: recorder)
                if let publish { afterCommit.append(publish) }
                done.append((index, AdminImportResult(userId: item.userId, status: .updated)))
            }
            return (done, afterCommit)
        }
        for publish in afterCommit { publish() }
        for (index, result) in done { results[index] = result }
        return results.map { $0! }
    }

    static func failure(_ userId: String, _ error: APIError) -> AdminImportResult {
        AdminImportResult(userId: userId, status: .failed, code: error.code, message: error.message)
    }

    /// The key to store for an avatar the backend sets: through the avatar check, on behalf of the user (who must be
    /// able to read the file), as when the user sets it.
    private func checkedAvatar(_ avatar: String??, appId: Int64, userId: String) async throws -> String?? {
        guard case .some(.some(let key)) = avatar else { return avatar }
        return .some(try await services.avatarKey(key, for: .user(userId), appId: appId, by: userId))
    }

    // MARK: One user

    func user(appId: Int64, userId: String) async throws -> AdminUser {
        guard let user = try await services.users.adminView(appId: appId, userId: userId) else {
            throw APIError.adminUserNotFound
        }
        return user
    }

    /// Changes the profile of a live account (1050 unknown, 1048 deleted), recording the `profile` event.
    func update(_ update: ProfileUpdate, appId: Int64, userId: String) async throws -> AdminUser {
        guard let existing = try await services.users.find(appId: appId, userId: userId) else {
            throw APIError.adminUserNotFound
        }
        guard existing.deletedAt == nil else { throw APIError.accountDeleted }
        var update = update
        update.avatar = try await checkedAvatar(update.avatar, appId: appId, userId: userId)
        let users = services.users
        let recorder = services.profileChanges
        let afterCommit = try await users.database.withTransaction { connection in
            // Locked and checked again: a deletion that committed meanwhile must not be undone by this change.
            guard let user = try await users.lockForLogin(on: connection, appId: appId, userId: userId) else {
                throw APIError.adminUserNotFound
            }
            guard user.deletedAt == nil else { throw APIError.accountDeleted }
            return try await services.updateProfile(
                update, appId: appId, userId: userId, origin: nil, on: connection, users: users,
                recorder: recorder
            ).1
        }
        afterCommit?()
        return try await user(appId: appId, userId: userId)
    }

    /// The same deletion as the user's own; deleting a deleted account changes nothing.
    func delete(appId: Int64, userId: String) async throws -> Int {
        guard let deletion = services.deletion else { throw APIError.internalError }
        switch try await deletion.delete(appId: appId, userId: userId) {
        case .unknownUser: throw APIError.adminUserNotFound
        case .alreadyDeleted: return 0
        case .deleted(let ended): return ended
        }
    }

    func ban(appId: Int64, userId: String) async throws -> Int {
        guard let ended = try await bans.banEndingSessions(appId: appId, userId: userId) else {
            throw APIError.adminUserNotFound
        }
        // At once here; the NOTIFY sent with the ends tells the other instances.
        services.sessions.announce(ended)
        return ended.count
    }

    func unban(appId: Int64, userId: String) async throws {
        guard try await bans.unban(appId: appId, userId: userId) != .unknownUser else {
            throw APIError.adminUserNotFound
        }
    }

    /// Ends one open session of the user (`sessionId`) or all of them, with the reason `forced_logout`.
    func logout(appId: Int64, userId: String, sessionId: String?) async throws -> Int {
        guard try await services.users.find(appId: appId, userId: userId) != nil else {
            throw APIError.adminUserNotFound
        }
        let ended = try await services.sessions.end(
            appId: appId, userId: userId, sessionId: sessionId, reason: .forcedLogout)
        if sessionId != nil, ended == 0 { throw APIError.adminSessionNotFound }
        return ended
    }
}

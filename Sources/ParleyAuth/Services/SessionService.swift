import Foundation
import ParleyHTTP
import ParleyObservability
import ParleyPostgres

/// Opens, refreshes and ends device sessions and issues their tokens. Every session that ends here is at once
/// refused locally (`SessionRevocations`), announced in-process (`SessionEvents`) and, through the NOTIFY sent
/// by the same statement, on every other instance.
final class SessionService: Sendable {
    let sessions: SessionRepository
    let users: UserRepository
    let tokens: TokenService
    let revocations: SessionRevocations
    let events: SessionEvents
    let defaults: TokenLifetimes
    /// Every token issued here is a user being active today (statistics).
    let activeUsers: ActiveUsers
    let logger: Logger

    init(
        sessions: SessionRepository, users: UserRepository, tokens: TokenService, revocations: SessionRevocations,
        events: SessionEvents, defaults: TokenLifetimes, activeUsers: ActiveUsers, logger: Logger
    ) {
        self.activeUsers = activeUsers
        self.sessions = sessions
        self.users = users
        self.tokens = tokens
        self.revocations = revocations
        self.events = events
        self.defaults = defaults
        self.logger = logger
    }

    var database: PostgresClient { sessions.database }

    // MARK: Opening

    /// A login of an existing (already authenticated) user: applies the app's session policy and opens a session.
    func login(app: AppSettings, userId: String, device: DeviceInfo) async throws -> AuthTokens {
        let refresh = newRefreshToken(app: app)
        let (user, sessionId, displaced) = try await database.withTransaction { connection in
            let user = try await lockUser(on: connection, app: app, userId: userId)
            let (sessionId, displaced) = try await openSession(
                on: connection, app: app, userId: userId, device: device, origin: .password, refresh: refresh)
            return (user, sessionId, displaced)
        }
        announce(displaced)
        return try bundle(app: app, user: user, sessionId: sessionId, refresh: refresh)
    }

    /// Locks the user row for the login (two logins of one user are serialized), 1035 when there is none.
    private func lockUser(on connection: PostgresConnection, app: AppSettings, userId: String) async throws
        -> StoredUser
    {
        guard let user = try await users.lockForLogin(on: connection, appId: app.id, userId: userId) else {
            throw APIError.invalidCredentials
        }
        // Checked under the row lock: a ban that commits first is seen, one that commits after ends this session.
        guard user.bannedAt == nil else { throw APIError.accountBanned }
        // A deleted account stays deleted: a signed login must not bring it back under the same id.
        guard user.deletedAt == nil else { throw APIError.accountDeleted }
        return user
    }

    /// Ends the sessions the app's policy displaces and opens the new one, in the caller's transaction after it
    /// locked the user (login and signed login share it).
    private func openSession(
        on connection: PostgresConnection, app: AppSettings, userId: String, device: DeviceInfo,
        origin: SessionOrigin, refresh: (token: String, hash: [UInt8], expiresAt: Date)
    ) async throws -> (String, [EndedSessionRow]) {
        let displaced = try await sessions.endDisplaced(
            on: connection, appId: app.id, userId: userId,
            policy: app.sessionPolicy, device: device)
        let sessionId = try await sessions.insert(
            on: connection, appId: app.id, userId: userId, device: device, origin: origin,
            refreshTokenHash: refresh.hash, refreshExpiresAt: refresh.expiresAt)
        return (sessionId, displaced)
    }

    /// Registers a built-in account and opens its first session; 1040 when the username is taken.
    func register(
        app: AppSettings, userId: String, username: String, passwordHash: String, nickname: String,
        avatar: String?, device: DeviceInfo
    ) async throws -> AuthTokens {
        let refresh = newRefreshToken(app: app)
        let (user, sessionId) = try await database.withTransaction { connection in
            // Registering accepts the privacy policy in force.
            let user = try await users.insertAccount(
                on: connection, appId: app.id, userId: userId, username: username,
                passwordHash: passwordHash, nickname: nickname, avatar: avatar,
                consentedVersion: app.privacyVersion)
            let sessionId = try await sessions.insert(
                on: connection, appId: app.id, userId: user.profile.id,
                device: device, origin: .password, refreshTokenHash: refresh.hash,
                refreshExpiresAt: refresh.expiresAt)
            return (user, sessionId)
        }
        return try bundle(app: app, user: user, sessionId: sessionId, refresh: refresh)
    }

    /// A signed login from the app's backend: the user is created on first use. When the user already holds an
    /// open signed session on the same platform and device id, that session is renewed (new tokens, same session:
    /// its sockets and push tokens stay, nobody is displaced); otherwise a session opens under the app's policy.
    /// The backend vouches for the user's consent to the privacy policy in force, as it does when the login creates
    /// the user: its users agree in its own app (seed 000 asks on a 1033 and tells the IM server nothing), so after a
    /// policy change their next signed login is consented, not answered 1033 forever.
    func externalLogin(app: AppSettings, userId: String, device: DeviceInfo) async throws -> SignedLoginResponse {
        let refresh = newRefreshToken(app: app)
        let (user, sessionId, renewed, displaced) = try await database.withTransaction { connection in
            _ = try await users.findOrCreateExternal(
                on: connection, appId: app.id, userId: userId,
                consentedVersion: app.privacyVersion)
            var user = try await lockUser(on: connection, app: app, userId: userId)
            guard user.passwordHash == nil else { throw APIError.passwordAccount }
            if user.profile.privacyVersion < app.privacyVersion,
                let recorded = try await users.recordConsent(
                    on: connection, appId: app.id, userId: userId, version: app.privacyVersion)
            {
                user.profile.privacyVersion = recorded
            }
            if let sessionId = try await sessions.renewable(
                on: connection, appId: app.id, userId: userId, device: device)
            {
                try await sessions.renew(
                    on: connection, sessionId: sessionId, device: device, refreshTokenHash: refresh.hash,
                    refreshExpiresAt: refresh.expiresAt)
                return (user, sessionId, true, [EndedSessionRow]())
            }
            let (sessionId, displaced) = try await openSession(
                on: connection, app: app, userId: userId, device: device, origin: .signed, refresh: refresh)
            return (user, sessionId, false, displaced)
        }
        announce(displaced)
        let session = try bundle(app: app, user: user, sessionId: sessionId, refresh: refresh)
        let client = try tokens.issue(
            .client, for: Principal(appId: app.id, userId: user.profile.id, sessionId: sessionId),
            consentedVersion: user.profile.privacyVersion, lifetime: lifetimes(app).im)
        return SignedLoginResponse(token: client.token, expiresAt: client.expiresAt, renewed: renewed, tokens: session)
    }

    // MARK: Refreshing

    func refresh(app: AppSettings?, apps: AppResolver, refreshToken: String, ipAddress: String) async throws
        -> AuthTokens
    {
        guard RefreshTokenHash.isWellFormed(refreshToken) else { throw APIError.refreshTokenInvalid }
        let newToken = Identifiers.newRefreshToken()
        let outcome = try await sessions.rotate(
            tokenHash: RefreshTokenHash.of(refreshToken), appId: app?.id,
            newTokenHash: RefreshTokenHash.of(newToken),
            defaultLifetime: defaults.refresh, ipAddress: ipAddress)
        switch outcome {
        case .unknown, .expired:
            throw APIError.refreshTokenInvalid
        case .sessionEnded:
            throw APIError.sessionEnded
        case .reused(let ended):
            announce(ended)
            logger.warning(
                "refresh token reused; session ended",
                ["session_id": .string(ended.first?.session.sessionId ?? "")])
            throw APIError.refreshTokenInvalid.with(
                message: "refresh token already used; the session was ended, log in again")
        case .rotated(let user, let appId, let sessionId, let expiresAt):
            guard let owner = try await resolveOwner(app, apps: apps, id: appId) else {
                throw APIError.refreshTokenInvalid
            }
            return try bundle(
                app: owner, user: user, sessionId: sessionId,
                refresh: (newToken, RefreshTokenHash.of(newToken), expiresAt))
        }
    }

    private func resolveOwner(_ app: AppSettings?, apps: AppResolver, id: Int64) async throws -> AppSettings? {
        if let app { return app }
        return try await apps.app(id: id)
    }

    // MARK: Ending

    /// Ends one session or every session of a user; returns how many ended.
    @discardableResult
    func end(appId: Int64, userId: String, sessionId: String?, reason: SessionEndReason) async throws -> Int {
        let ended = try await sessions.end(appId: appId, userId: userId, sessionId: sessionId, reason: reason)
        announce(ended)
        return ended.count
    }

    /// Refuses the sessions' tokens on this instance at once and publishes each newly learnt end once.
    func announce(_ ended: [EndedSessionRow]) {
        for row in ended {
            if revocations.insert(row.session.sessionId, endedAt: Int64(row.endedAt.timeIntervalSince1970)) {
                events.publish(.sessionEnded(row.session))
            }
        }
    }

    // MARK: Tokens

    func lifetimes(_ app: AppSettings) -> TokenLifetimes { defaults.applying(app) }

    /// A token for an open session that expires with its refresh token at the latest (consent and the IM token
    /// renewal must not stretch a session past what a refresh would allow); 1034 when the session cannot go on.
    func issueWithinSession(
        _ audience: TokenAudience, app: AppSettings, principal: Principal, consentedVersion: Int,
        lifetime: Int, ipAddress: String
    ) async throws -> IssuedToken {
        let reach = try await sessions.touch(appId: app.id, sessionId: principal.sessionId, ipAddress: ipAddress)
        let now = Date()
        guard case .until(let limit) = reach else { throw APIError.sessionEnded }
        let remaining = Int(limit.timeIntervalSince(now).rounded(.down))
        guard remaining > 0 else { throw APIError.sessionEnded }
        activeUsers.record(appId: principal.appId, userId: principal.userId)
        return try tokens.issue(
            audience, for: principal, consentedVersion: consentedVersion, lifetime: min(lifetime, remaining), now: now)
    }

    private func newRefreshExpiry(_ app: AppSettings) -> Date {
        Date().addingTimeInterval(TimeInterval(lifetimes(app).refresh))
    }

    private func newRefreshToken(app: AppSettings) -> (token: String, hash: [UInt8], expiresAt: Date) {
        let token = Identifiers.newRefreshToken()
        return (token, RefreshTokenHash.of(token), newRefreshExpiry(app))
    }

    private func bundle(
        app: AppSettings, user: StoredUser, sessionId: String,
        refresh: (token: String, hash: [UInt8], expiresAt: Date)
    ) throws -> AuthTokens {
        let principal = Principal(appId: app.id, userId: user.profile.id, sessionId: sessionId)
        activeUsers.record(appId: app.id, userId: user.profile.id)
        let lifetimes = lifetimes(app)
        let version = user.profile.privacyVersion
        let access = try tokens.issue(.api, for: principal, consentedVersion: version, lifetime: lifetimes.access)
        let im = try tokens.issue(.im, for: principal, consentedVersion: version, lifetime: lifetimes.im)
        return AuthTokens(
            user: user.profile, sessionId: sessionId, accessToken: access.token,
            accessTokenExpiresAt: access.expiresAt, refreshToken: refresh.token,
            refreshTokenExpiresAt: refresh.expiresAt, imToken: im.token, imTokenExpiresAt: im.expiresAt)
    }
}

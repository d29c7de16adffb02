import ParleyCrypto
import ParleyHTTP
import ParleyObservability
import ParleyPostgres

/// The auth feature's parts, shared by its controllers. Built once by `AuthModule`.
struct AuthServices: Sendable {
    let configuration: AuthConfiguration
    let apps: AppResolver
    let users: UserRepository
    let throttles: LoginThrottleRepository
    let registrations: RegistrationThrottleRepository
    let sessions: SessionService
    let authenticator: Authenticator
    let consents: ConsentCache
    let limits: AuthRateLimits
    let passwords: PasswordHashingPool
    let dummyHash: DummyPasswordHash
    let signatures: SignedRequestVerifier
    let refusals: QuotaRefusals
    let logger: Logger
    /// The file service's avatar check, handed over when the routes are registered (files is built after auth).
    var avatars: AvatarAuthorizer? = nil
    /// The account deletion flow with every feature's participants, handed over with the routes.
    var deletion: AccountDeletion? = nil
    /// Messaging's `profile` event, handed over the same way (messaging depends on auth, not the reverse).
    var profileChanges: ProfileChangeRecorder? = nil

    /// The key to store as `holder`'s avatar: `raw`, shape-checked, through the avatar check when one is wired.
    func avatarKey(_ raw: String, for holder: AvatarHolder, appId: Int64, by userId: String) async throws -> String {
        let key = try AuthInput.avatar(raw)!
        guard let avatars else { return key }
        return try await avatars(key, holder, appId, userId)
    }

    /// Applies a validated update in one transaction with the record of the change (when a field other users see
    /// changed), then publishes it: the profile and its event commit together or not at all.
    func updateProfile(_ update: ProfileUpdate, by principal: Principal) async throws -> UserProfile {
        guard
            let profile = try await updateProfile(
                update, appId: principal.appId, userId: principal.userId, origin: principal.origin)
        else {
            throw APIError.sessionEnded
        }
        return profile
    }

    /// `updateProfile` for any user of the app (the admin API: no session of the user's made the change); nil when
    /// there is no such user.
    func updateProfile(_ update: ProfileUpdate, appId: Int64, userId: String, origin: String?) async throws
        -> UserProfile?
    {
        let users = users
        let recorder = profileChanges
        let (profile, afterCommit) = try await users.database.withTransaction { connection in
            try await updateProfile(
                update, appId: appId, userId: userId, origin: origin, on: connection, users: users,
                recorder: recorder)
        }
        afterCommit?()
        return profile
    }

    /// The update inside the caller's transaction; answers the profile (nil: no such user) and what to publish
    /// after the commit.
    func updateProfile(
        _ update: ProfileUpdate, appId: Int64, userId: String, origin: String?,
        on connection: PostgresConnection, users: UserRepository, recorder: ProfileChangeRecorder?
    ) async throws -> (UserProfile?, (@Sendable () -> Void)?) {
        guard
            let (user, publicChanged) = try await users.updateProfile(
                on: connection, appId: appId, userId: userId, update: update)
        else {
            return (nil, nil)
        }
        guard publicChanged, let recorder else { return (user.profile, nil) }
        let publish = try await recorder(appId, user.profile.publicProfile, origin, connection)
        return (user.profile, publish)
    }
}

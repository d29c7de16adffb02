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
        let users = users
        let recorder = profileChanges
        let (profile, afterCommit) = try await users.database.withTransaction { connection in
            guard
                let (user, publicChanged) = try await users.updateProfile(
                    on: connection, appId: principal.appId, userId: principal.userId, update: update)
            else {
                throw APIError.sessionEnded
            }
            guard publicChanged, let recorder else { return (user.profile, nil as (@Sendable () -> Void)?) }
            let publish = try await recorder(
                principal.appId, user.profile.publicProfile, principal.sessionId, connection)
            return (user.profile, publish)
        }
        afterCommit?()
        return profile
    }
}

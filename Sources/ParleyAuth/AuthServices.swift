import ParleyCrypto
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
}

import ParleyCrypto
import Synchronization

/// A hash made at start-up with the configured parameters: a login for an unknown username verifies against
/// it, so that it takes as long as a wrong password and the timing does not reveal whether the account exists.
final class DummyPasswordHash: Sendable {
    private let value = Mutex<String?>(nil)

    func prepare(parameters: PasswordHasher.Parameters, pool: PasswordHashingPool) async throws {
        let random = SecureRandom.token()
        let hash = try await pool.run { try? PasswordHasher.hash(password: random, parameters: parameters) }
        value.withLock { $0 = hash }
    }

    /// Before `prepare` finished: a well-formed hash with the default cost (the salt and hash are junk).
    var encoded: String {
        value.withLock { $0 }
            ?? "$scrypt$ln=15,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    }
}

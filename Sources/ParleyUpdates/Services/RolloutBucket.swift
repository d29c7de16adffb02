import ParleyCrypto

/// The stable bucket (0-99) of a caller for a release: the first 8 bytes of
/// SHA-256("parley-rollout/<app id>/<release id>/<subject>") as a big-endian integer, mod 100. A release at
/// `rolloutPercent` P is offered to the callers whose bucket is below P, so the answer never flickers between
/// calls, raising P only adds callers, and each release draws its own subset.
public enum RolloutBucket {
    /// `subject`: "u:" + user id (a valid access token came with the check) or "d:" + device id.
    public static func bucket(appId: Int64, releaseId: Int64, subject: String) -> Int {
        let digest = SHA256.hash(Array("parley-rollout/\(appId)/\(releaseId)/\(subject)".utf8))
        var value: UInt64 = 0
        for byte in digest.prefix(8) { value = value << 8 | UInt64(byte) }
        return Int(value % 100)
    }

    /// Whether a release at `rolloutPercent` is offered to `subject`. Full rollouts need no subject; partial
    /// ones are never offered to a caller without one (there is nothing stable to draw a bucket from).
    public static func isOffered(appId: Int64, releaseId: Int64, rolloutPercent: Int, subject: String?) -> Bool {
        if rolloutPercent >= 100 { return true }
        if rolloutPercent <= 0 { return false }
        guard let subject else { return false }
        return bucket(appId: appId, releaseId: releaseId, subject: subject) < rolloutPercent
    }
}

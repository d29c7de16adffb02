import ParleyCrypto

/// Encrypts app secrets at rest under the master key (`MasterKeySealer`). The app key is the associated data, so
/// a ciphertext copied onto another app's row does not decrypt.
public struct AppSecretBox: Sendable {
    public let sealer: MasterKeySealer

    public init(sealer: MasterKeySealer) {
        self.sealer = sealer
    }

    public init(masterKey: MasterKey) {
        self.init(sealer: MasterKeySealer(current: masterKey))
    }

    public func seal(secret: String, appKey: String) throws(CryptoError) -> [UInt8] {
        try sealer.seal(Array(secret.utf8), associatedData: associatedData(appKey))
    }

    /// The secret, or nil when the ciphertext is not authentic under the master key (wrong key, tampered row).
    public func open(_ sealed: [UInt8], appKey: String) -> String? {
        sealer.open(sealed, associatedData: associatedData(appKey)).flatMap { String(validating: $0, as: UTF8.self) }
    }

    public func reseal(_ sealed: [UInt8], appKey: String) -> MasterKeySealer.Reseal {
        sealer.reseal(sealed, associatedData: associatedData(appKey))
    }

    private func associatedData(_ appKey: String) -> [UInt8] { Array("parley app secret v1:\(appKey)".utf8) }
}

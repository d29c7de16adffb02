import ParleyCrypto

/// Encrypts app secrets at rest with AES-256-GCM under the master key. The app key is the associated data, so
/// a ciphertext copied onto another app's row does not decrypt.
public struct AppSecretBox: Sendable {
    let masterKey: MasterKey

    public init(masterKey: MasterKey) {
        self.masterKey = masterKey
    }

    public func seal(secret: String, appKey: String) throws(CryptoError) -> [UInt8] {
        try AESGCM.seal(plaintext: Array(secret.utf8), key: masterKey.bytes, associatedData: associatedData(appKey))
    }

    /// The secret, or nil when the ciphertext is not authentic under this master key (wrong key, tampered row).
    public func open(_ sealed: [UInt8], appKey: String) -> String? {
        guard let plain = try? AESGCM.open(sealed, key: masterKey.bytes, associatedData: associatedData(appKey)) else {
            return nil
        }
        return String(validating: plain, as: UTF8.self)
    }

    private func associatedData(_ appKey: String) -> [UInt8] { Array("parley app secret v1:\(appKey)".utf8) }
}

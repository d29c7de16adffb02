import ParleyAuth
import ParleyCrypto

/// Seals apps' APNs keys (.p8 PEM) at rest with AES-256-GCM under the master key, as app secrets are sealed. The
/// associated data names the app, so a sealed key copied onto another app's row does not open.
public struct PushKeyBox: Sendable {
    let masterKey: MasterKey

    public init(masterKey: MasterKey) {
        self.masterKey = masterKey
    }

    public func seal(pem: String, appId: Int64) throws(CryptoError) -> [UInt8] {
        try AESGCM.seal(plaintext: Array(pem.utf8), key: masterKey.bytes, associatedData: associatedData(appId))
    }

    /// The PEM, or nil when the bytes are not authentic under this master key for this app.
    public func open(_ sealed: [UInt8], appId: Int64) -> String? {
        guard let plain = try? AESGCM.open(sealed, key: masterKey.bytes, associatedData: associatedData(appId)) else {
            return nil
        }
        return String(validating: plain, as: UTF8.self)
    }

    private func associatedData(_ appId: Int64) -> [UInt8] { Array("parley apns key v1:\(appId)".utf8) }
}

import ParleyAuth
import ParleyCrypto

/// Seals apps' APNs keys (.p8 PEM) at rest under the master key (`MasterKeySealer`), as app secrets are sealed. The
/// associated data names the app, so a sealed key copied onto another app's row does not open.
public struct PushKeyBox: Sendable {
    public let sealer: MasterKeySealer

    public init(sealer: MasterKeySealer) {
        self.sealer = sealer
    }

    public init(masterKey: MasterKey) {
        self.init(sealer: MasterKeySealer(current: masterKey))
    }

    public func seal(pem: String, appId: Int64) throws(CryptoError) -> [UInt8] {
        try sealer.seal(Array(pem.utf8), associatedData: associatedData(appId))
    }

    /// The PEM, or nil when the bytes are not authentic under the master key for this app.
    public func open(_ sealed: [UInt8], appId: Int64) -> String? {
        sealer.open(sealed, associatedData: associatedData(appId)).flatMap { String(validating: $0, as: UTF8.self) }
    }

    public func reseal(_ sealed: [UInt8], appId: Int64) -> MasterKeySealer.Reseal {
        sealer.reseal(sealed, associatedData: associatedData(appId))
    }

    private func associatedData(_ appId: Int64) -> [UInt8] { Array("parley apns key v1:\(appId)".utf8) }
}

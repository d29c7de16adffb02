import ParleyAuth
import ParleyCrypto

/// Seals apps' APNs keys (.p8 PEM) and client certificates (with their keys, PEM) at rest under the master key (`MasterKeySealer`), as app secrets are sealed. The
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

    // APNs client certificates (`TLSClientIdentity.pem`): the associated data also names the environment, so a
    // sandbox certificate copied into the production column does not open.

    public func seal(certificatePEM pem: String, appId: Int64, environment: PushEnvironment) throws(CryptoError)
        -> [UInt8]
    {
        try sealer.seal(Array(pem.utf8), associatedData: associatedData(appId, environment))
    }

    public func openCertificate(_ sealed: [UInt8], appId: Int64, environment: PushEnvironment) -> String? {
        sealer.open(sealed, associatedData: associatedData(appId, environment)).flatMap {
            String(validating: $0, as: UTF8.self)
        }
    }

    public func resealCertificate(_ sealed: [UInt8], appId: Int64, environment: PushEnvironment)
        -> MasterKeySealer.Reseal
    {
        sealer.reseal(sealed, associatedData: associatedData(appId, environment))
    }

    private func associatedData(_ appId: Int64, _ environment: PushEnvironment) -> [UInt8] {
        Array("parley apns certificate v1:\(appId):\(environment.rawValue)".utf8)
    }
}

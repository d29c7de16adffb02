import ParleyAuth
import ParleyCrypto

/// FCM service accounts and HMS client secrets, sealed under the master key as APNs keys are. Each kind has its own
/// associated data (naming it and the app), so no sealed value opens as another kind or for another app.
extension PushKeyBox {
    public func sealFCMServiceAccount(_ json: [UInt8], appId: Int64) throws(CryptoError) -> [UInt8] {
        try sealer.seal(json, associatedData: Self.fcmAssociatedData(appId))
    }

    /// The service-account JSON, or nil when the bytes are not authentic under the master key for this app.
    public func openFCMServiceAccount(_ sealed: [UInt8], appId: Int64) -> [UInt8]? {
        sealer.open(sealed, associatedData: Self.fcmAssociatedData(appId))
    }

    public func resealFCMServiceAccount(_ sealed: [UInt8], appId: Int64) -> MasterKeySealer.Reseal {
        sealer.reseal(sealed, associatedData: Self.fcmAssociatedData(appId))
    }

    public func sealHMSClientSecret(_ secret: String, appId: Int64) throws(CryptoError) -> [UInt8] {
        try sealer.seal(Array(secret.utf8), associatedData: Self.hmsAssociatedData(appId))
    }

    public func openHMSClientSecret(_ sealed: [UInt8], appId: Int64) -> String? {
        sealer.open(sealed, associatedData: Self.hmsAssociatedData(appId)).flatMap {
            String(validating: $0, as: UTF8.self)
        }
    }

    public func resealHMSClientSecret(_ sealed: [UInt8], appId: Int64) -> MasterKeySealer.Reseal {
        sealer.reseal(sealed, associatedData: Self.hmsAssociatedData(appId))
    }

    private static func fcmAssociatedData(_ appId: Int64) -> [UInt8] {
        Array("parley fcm service account v1:\(appId)".utf8)
    }

    private static func hmsAssociatedData(_ appId: Int64) -> [UInt8] {
        Array("parley hms client secret v1:\(appId)".utf8)
    }
}

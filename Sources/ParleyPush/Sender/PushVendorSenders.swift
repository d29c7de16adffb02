import ParleyObservability
import Synchronization

/// Every credential of one app the worker could open, by vendor. Tokens of a vendor without credentials are
/// skipped (an iOS-only app keeps its Android users' tokens for when it adds FCM).
struct PushCredentials: Sendable {
    var apns: APNsCredentials?
    var fcm: FCMCredentials?
    var hms: HMSCredentials?

    /// nil when the app can push to no vendor at all.
    init?(apns: APNsCredentials?, fcm: FCMCredentials?, hms: HMSCredentials?) {
        guard apns != nil || fcm != nil || hms != nil else { return nil }
        self.apns = apns
        self.fcm = fcm
        self.hms = hms
    }

    func delivers(_ vendor: PushVendor) -> Bool {
        switch vendor {
        case .apns, .apnsVoip: apns != nil
        case .fcm: fcm != nil
        case .hms: hms != nil
        }
    }
}

/// The Android vendors' senders, and the opening of their sealed credentials (cached per app while the sealed bytes
/// are unchanged: parsing a service account's RSA key for every job would cost more than the push).
public final class PushVendorSenders: Sendable {
    let fcm: FCMSender
    let hms: HMSSender
    let settings: PushVendorSettingsRepository
    let keys: PushKeyBox
    let logger: Logger
    private let openedAccounts = Mutex<[Int64: (sealed: [UInt8], account: FCMServiceAccount)]>([:])

    init(fcm: FCMSender, hms: HMSSender, settings: PushVendorSettingsRepository, keys: PushKeyBox, logger: Logger) {
        self.fcm = fcm
        self.hms = hms
        self.settings = settings
        self.keys = keys
        self.logger = logger
    }

    func fcmCredentials(_ settings: PushVendorSettings) -> FCMCredentials? {
        guard let sealed = settings.sealedFCMServiceAccount else { return nil }
        let account: FCMServiceAccount
        if let cached = openedAccounts.withLock({ $0[settings.appId] }), cached.sealed == sealed {
            account = cached.account
        } else {
            guard let json = keys.openFCMServiceAccount(sealed, appId: settings.appId),
                let opened = try? FCMServiceAccount(json: json)
            else {
                logger.error(
                    "the app's FCM service account does not open under this master key",
                    ["app_id": .int(Int(settings.appId))])
                return nil
            }
            openedAccounts.withLock { $0[settings.appId] = (sealed, opened) }
            account = opened
        }
        return FCMCredentials(
            appId: settings.appId, account: account, endpoint: settings.fcmEndpoint, tokenURI: settings.fcmTokenURI)
    }

    func hmsCredentials(_ settings: PushVendorSettings) -> HMSCredentials? {
        guard let clientId = settings.hmsAppId, let sealed = settings.sealedHMSClientSecret else { return nil }
        guard let secret = keys.openHMSClientSecret(sealed, appId: settings.appId) else {
            logger.error(
                "the app's HMS client secret does not open under this master key",
                ["app_id": .int(Int(settings.appId))])
            return nil
        }
        return HMSCredentials(
            appId: settings.appId, clientId: clientId, clientSecret: secret, endpoint: settings.hmsEndpoint,
            oauthEndpoint: settings.hmsOAuthEndpoint)
    }
}

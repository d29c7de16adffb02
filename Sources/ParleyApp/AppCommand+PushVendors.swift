import Foundation
import ParleyAuth
import ParleyPush

/// The FCM and HMS part of `parley app push`: read and checked with the other options, before anything is stored;
/// secrets are sealed under the master key and never printed.
struct PushVendorOptions {
    static let usage = """
                                  [--fcm-service-account FILE.json] [--fcm-endpoint URL|default]
                                  [--fcm-token-uri-override URL|default] [--remove-fcm]
                                  [--hms-app-id ID --hms-client-secret SECRET] [--hms-endpoint URL|default]
                                  [--hms-oauth-endpoint URL|default] [--remove-hms]
        """

    var serviceAccountJSON: [UInt8]?
    var serviceAccount: FCMServiceAccount?
    var hmsClientSecret: String?
    var update = PushVendorSettingsRepository.Update()

    /// Takes the vendor options out of `options` and checks them.
    init(_ options: inout AppCommand.Options) throws {
        let accountFile = options.take("--fcm-service-account")
        let fcmEndpoint = options.take("--fcm-endpoint")
        let fcmTokenURI = options.take("--fcm-token-uri-override")
        update.removeFCM = options.takeFlag("--remove-fcm")
        let hmsAppId = options.take("--hms-app-id")
        let hmsSecret = options.take("--hms-client-secret")
        let hmsEndpoint = options.take("--hms-endpoint")
        let hmsOAuthEndpoint = options.take("--hms-oauth-endpoint")
        update.removeHMS = options.takeFlag("--remove-hms")
        if update.removeFCM, accountFile != nil || fcmEndpoint != nil || fcmTokenURI != nil {
            throw AppCommand.UsageError(description: "--remove-fcm takes no other --fcm-* option")
        }
        if update.removeHMS, hmsAppId != nil || hmsSecret != nil || hmsEndpoint != nil || hmsOAuthEndpoint != nil {
            throw AppCommand.UsageError(description: "--remove-hms takes no other --hms-* option")
        }
        if let accountFile {
            guard let data = FileManager.default.contents(atPath: accountFile) else {
                throw AppCommand.UsageError(description: "cannot read --fcm-service-account \(accountFile)")
            }
            do {
                let account = try FCMServiceAccount(json: Array(data))
                serviceAccount = account
                serviceAccountJSON = Array(data)
                update.fcmProjectId = account.projectId
            } catch {
                throw AppCommand.UsageError(
                    description: "--fcm-service-account \(accountFile) is not a Google service-account key file: "
                        + "\(error)")
            }
        }
        (update.fcmEndpoint, update.clearFCMEndpoint) = try Self.url(fcmEndpoint, flag: "--fcm-endpoint")
        (update.fcmTokenURI, update.clearFCMTokenURI) = try Self.url(fcmTokenURI, flag: "--fcm-token-uri-override")
        // An app id names the OAuth client its secret belongs to: the two change together.
        guard (hmsAppId == nil) == (hmsSecret == nil) else {
            throw AppCommand.UsageError(description: "--hms-app-id and --hms-client-secret go together")
        }
        if let hmsAppId {
            guard PushEndpoints.isHMSAppID(hmsAppId) else {
                throw AppCommand.UsageError(description: "--hms-app-id must be the app's numeric AppGallery app id")
            }
            update.hmsAppId = hmsAppId
        }
        if let hmsSecret {
            guard (1...256).contains(hmsSecret.utf8.count), !hmsSecret.utf8.contains(where: { $0 <= 0x20 }) else {
                throw AppCommand.UsageError(description: "--hms-client-secret must be 1-256 characters, no spaces")
            }
            hmsClientSecret = hmsSecret
        }
        (update.hmsEndpoint, update.clearHMSEndpoint) = try Self.url(hmsEndpoint, flag: "--hms-endpoint")
        (update.hmsOAuthEndpoint, update.clearHMSOAuthEndpoint) = try Self.url(
            hmsOAuthEndpoint, flag: "--hms-oauth-endpoint")
    }

    /// An endpoint override: a URL (trailing slash dropped), or `default` to go back to the vendor's.
    private static func url(_ value: String?, flag: String) throws -> (String?, Bool) {
        guard let value else { return (nil, false) }
        if value == "default" { return (nil, true) }
        guard PushEndpoints.isURL(value) else {
            throw AppCommand.UsageError(description: "\(flag) must be an http:// or https:// URL, or `default`")
        }
        return (value.hasSuffix("/") ? String(value.dropLast()) : value, false)
    }

    /// The update with its secrets sealed for `appId`.
    func sealed(appId: Int64, box: PushKeyBox) throws -> PushVendorSettingsRepository.Update {
        var update = update
        if let serviceAccountJSON {
            update.sealedFCMServiceAccount = try box.sealFCMServiceAccount(serviceAccountJSON, appId: appId)
        }
        if let hmsClientSecret {
            update.sealedHMSClientSecret = try box.sealHMSClientSecret(hmsClientSecret, appId: appId)
        }
        return update
    }

    /// Whether the app has FCM or HMS credentials once `update` is stored over `stored`.
    func hasCredentials(over stored: PushVendorSettings?) -> Bool {
        let fcm = !update.removeFCM && (serviceAccount != nil || stored?.hasFCMCredentials == true)
        let hms = !update.removeHMS && (hmsClientSecret != nil || stored?.hasHMSCredentials == true)
        return fcm || hms
    }

    /// The settings as `parley app push` prints them: which credentials are stored, never their values.
    static func describe(_ settings: PushVendorSettings?, output: (String) -> Void) {
        output("fcmProjectId    \(settings?.fcmProjectId ?? "(none)")")
        output("fcmAccount      \(settings?.sealedFCMServiceAccount == nil ? "(none)" : "(stored, encrypted)")")
        output("fcmEndpoint     \(settings?.fcmEndpoint ?? "(Google's)")")
        output("fcmTokenURI     \(settings?.fcmTokenURI ?? "(the service account's token_uri)")")
        output("hmsAppId        \(settings?.hmsAppId ?? "(none)")")
        output("hmsSecret       \(settings?.sealedHMSClientSecret == nil ? "(none)" : "(stored, encrypted)")")
        output("hmsEndpoint     \(settings?.hmsEndpoint ?? "(Huawei's)")")
        output("hmsOAuthEndpoint \(settings?.hmsOAuthEndpoint ?? "(Huawei's)")")
    }
}

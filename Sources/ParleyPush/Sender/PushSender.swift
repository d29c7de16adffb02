/// One push to one device token, ready to send.
public struct PushNotification: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// A visible notification (`apns-push-type: alert`).
        case alert
        /// A PushKit VoIP push waking the app to report an incoming call (`apns-push-type: voip`); to FCM and HMS
        /// tokens a data-only message at high priority, which wakes the app to ring.
        case voip
    }

    public var vendor: PushVendor
    public var token: String
    public var environment: PushEnvironment
    /// The app's bundle id (without `.voip`); the sender derives the APNs topic from it.
    public var bundleId: String
    public var kind: Kind
    /// The JSON payload (`{"aps": ...}`).
    public var payload: [UInt8]
    /// Devices show one notification per collapse id: a push retried after a crash replaces, not repeats, itself.
    public var collapseId: String
    /// Seconds since 1970 after which APNs stops trying to deliver (0: only now).
    public var expiration: Int

    public init(
        vendor: PushVendor, token: String, environment: PushEnvironment, bundleId: String, kind: Kind,
        payload: [UInt8], collapseId: String, expiration: Int
    ) {
        self.vendor = vendor
        self.token = token
        self.environment = environment
        self.bundleId = bundleId
        self.kind = kind
        self.payload = payload
        self.collapseId = collapseId
        self.expiration = expiration
    }
}

/// How one push ended.
public enum PushOutcome: Sendable, Equatable {
    /// Accepted by the push service.
    case delivered
    /// The token is dead (uninstalled app, wrong topic or environment): delete it, never retry.
    case invalidToken(reason: String)
    /// Worth trying again later (timeouts, 5xx, 429, connection failures, expired provider token).
    case retry(reason: String)
    /// Refused for a reason a retry will not fix (payload too large, bad topic): dropped, token kept.
    case rejected(reason: String)
}

/// What a vendor answered one push: the outcome, and for the attempts log (`push_attempts`) the HTTP status (nil
/// when no answer came) and the vendor's id of the notification (APNs' `apns-id`).
public struct PushAnswer: Sendable, Equatable {
    public var outcome: PushOutcome
    public var status: Int?
    public var vendorId: String?

    public init(outcome: PushOutcome, status: Int? = nil, vendorId: String? = nil) {
        self.outcome = outcome
        self.status = status
        self.vendorId = vendorId
    }
}

/// Delivers pushes of one vendor family. The worker calls it from many tasks at once.
public protocol PushSender: Sendable {
    func send(_ notification: PushNotification, credentials: APNsCredentials) async -> PushOutcome
    /// `send` with what the attempts log records of the answer; the worker calls this one.
    func attempt(_ notification: PushNotification, credentials: APNsCredentials) async -> PushAnswer
}

extension PushSender {
    /// Senders that know no more than the outcome.
    public func attempt(_ notification: PushNotification, credentials: APNsCredentials) async -> PushAnswer {
        PushAnswer(outcome: await send(notification, credentials: credentials))
    }
}

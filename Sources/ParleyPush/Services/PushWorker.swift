import Foundation
import ParleyCrypto
import ParleyObservability
import Synchronization

/// Delivers the outbox: leases due jobs, pushes each message to its offline recipients' tokens, records every
/// token pushed, and deletes the job when all are done. Retryable failures (timeouts, 5xx, 429) put the job back
/// with exponential backoff; dead tokens are deleted. A crash anywhere leaves the job leased until its lease
/// ends, then any instance takes it over; tokens recorded as pushed are not pushed again.
final class PushWorker: Sendable {
    let configuration: PushConfiguration
    let jobs: PushJobRepository
    let tokens: PushTokenRepository
    let settings: PushSettingsRepository
    let keys: PushKeyBox
    let sender: any PushSender
    let vendors: PushVendorSenders
    let attempts: PushAttemptRepository
    let logger: Logger
    /// Signing keys opened from their sealed form, per app (opened again when the sealed bytes change).
    private let openedKeys = Mutex<[Int64: (sealed: [UInt8], key: P256.SigningKey)]>([:])
    /// APNs client certificates opened from their sealed form, per app and environment (likewise).
    private let openedCertificates = Mutex<[PushEnvironmentKey: (sealed: [UInt8], identity: TLSClientIdentity)]>([:])

    private struct PushEnvironmentKey: Hashable {
        var appId: Int64
        var environment: PushEnvironment
    }

    init(
        configuration: PushConfiguration, jobs: PushJobRepository, tokens: PushTokenRepository,
        settings: PushSettingsRepository, keys: PushKeyBox, sender: any PushSender, vendors: PushVendorSenders,
        attempts: PushAttemptRepository,
        logger: Logger
    ) {
        self.attempts = attempts
        self.configuration = configuration
        self.jobs = jobs
        self.tokens = tokens
        self.settings = settings
        self.keys = keys
        self.sender = sender
        self.vendors = vendors
        self.logger = logger
    }

    /// One lease and its jobs; returns how many jobs were leased.
    @discardableResult
    func runPass() async -> Int {
        let leased: [PushJobRepository.Job]
        do {
            leased = try await jobs.lease(limit: configuration.batchSize, leaseSeconds: configuration.leaseSeconds)
        } catch {
            logger.warning("leasing push jobs failed", ["error": .string(String(describing: error))])
            return 0
        }
        guard !leased.isEmpty else { return 0 }
        let appSettings: [Int64: PushSettings]
        let appVendorSettings: [Int64: PushVendorSettings]
        do {
            appSettings = try await settings.settings(appIds: Array(Set(leased.map(\.appId))))
            appVendorSettings = try await vendors.settings.settings(appIds: Array(Set(leased.map(\.appId))))
        } catch {
            logger.warning("loading push settings failed", ["error": .string(String(describing: error))])
            return leased.count // the leases expire and the jobs come back
        }
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for job in leased {
                if running >= configuration.concurrentJobs {
                    await group.next()
                    running -= 1
                }
                group.addTask { [self] in
                    await process(job, settings: appSettings[job.appId], vendorSettings: appVendorSettings[job.appId])
                }
                running += 1
            }
        }
        return leased.count
    }

    /// Pushes one job. Errors of the database leave the job leased: it is retried when the lease expires.
    func process(_ job: PushJobRepository.Job, settings: PushSettings?, vendorSettings: PushVendorSettings?) async {
        do {
            try await deliver(job, settings: settings, vendorSettings: vendorSettings)
        } catch {
            logger.warning(
                "push job failed; retried after its lease",
                [
                    "job_id": .int(Int(job.id)),
                    "error": .string(String(describing: error)),
                ])
        }
    }

    private func deliver(
        _ job: PushJobRepository.Job, settings: PushSettings?, vendorSettings: PushVendorSettings?
    ) async throws {
        guard let settings, settings.enabled,
            let credentials = PushCredentials(
                apns: settings.hasAPNsCredentials ? credentials(settings) : nil,
                fcm: vendorSettings.flatMap(vendors.fcmCredentials), hms: vendorSettings.flatMap(vendors.hmsCredentials)
            )
        else {
            // Push was turned off (or never configured) after the job was queued.
            try await jobs.complete(jobId: job.id)
            return
        }
        let pushes: [(PushTarget, PushNotification)]
        if let call = job.call {
            pushes = try await callPushes(job, call, settings: settings, credentials: credentials)
        } else if let messageId = job.messageId,
            let message = try await jobs.message(appId: job.appId, id: messageId), !message.revoked
        {
            pushes = try await messagePushes(job, message, settings: settings, credentials: credentials)
        } else {
            pushes = [] // revoked (or gone) before delivery: no push
        }
        if pushes.isEmpty {
            try await jobs.complete(jobId: job.id)
            return
        }
        let answers = await withTaskGroup(of: (PushTarget, PushNotification.Kind, PushAnswer).self) { group in
            for (target, notification) in pushes {
                group.addTask { [self] in
                    (target, notification.kind, await send(notification, credentials: credentials))
                }
            }
            var all: [(PushTarget, PushNotification.Kind, PushAnswer)] = []
            for await answer in group { all.append(answer) }
            return all
        }
        await record(answers, job: job)
        let outcomes = answers.map { ($0.0, $0.2.outcome) }
        var pushed: [PushTarget] = []
        var dead: [(PushVendor, String)] = []
        var retryReasons: [String] = []
        for (target, outcome) in outcomes {
            switch outcome {
            case .delivered:
                pushed.append(target)
            case .invalidToken(let reason):
                logger.info(
                    "push token removed",
                    [
                        "app_id": .int(Int(job.appId)), "user_id": .string(target.userId),
                        "vendor": .string(target.vendor.rawValue), "reason": .string(reason),
                    ])
                dead.append((target.vendor, target.token))
            case .rejected(let reason):
                logger.warning(
                    "push rejected",
                    [
                        "app_id": .int(Int(job.appId)), "job_id": .int(Int(job.id)),
                        "reason": .string(reason),
                    ])
                pushed.append(target) // not worth another try: counted as done
            case .retry(let reason):
                retryReasons.append(reason)
            }
        }
        try await jobs.recordDeliveries(jobId: job.id, pushed)
        try await tokens.delete(appId: job.appId, tokens: dead)
        guard !retryReasons.isEmpty else {
            try await jobs.complete(jobId: job.id)
            return
        }
        if job.attempts >= configuration.maxAttempts {
            logger.warning(
                "push job given up",
                [
                    "job_id": .int(Int(job.id)), "message_id": .int(Int(job.messageId ?? 0)),
                    "attempts": .int(job.attempts), "reason": .string(retryReasons[0]),
                ])
            try await jobs.complete(jobId: job.id)
            return
        }
        let delay = configuration.backoff(afterAttempts: job.attempts)
        logger.info(
            "push job will retry",
            [
                "job_id": .int(Int(job.id)), "attempts": .int(job.attempts),
                "delay_ms": .int(Int(delay.components.seconds * 1000)),
                "reason": .string(retryReasons[0]),
            ])
        try await jobs.reschedule(jobId: job.id, after: delay)
    }

    /// A message's pushes to its offline recipients' tokens this job has not pushed yet.
    private func messagePushes(
        _ job: PushJobRepository.Job, _ message: PushMessage, settings: PushSettings, credentials: PushCredentials
    ) async throws -> [(PushTarget, PushNotification)] {
        let targets = try await jobs.targets(
            job: job, message: message, staleSeconds: configuration.presenceStaleSeconds)
        let delivered = Set(targets.filter { $0.delivered }.map { $0.0 })
        let plan = PushPayload.plan(
            for: message, tokens: targets.map { $0.0 }.filter { credentials.delivers($0.vendor) }
        )
        .filter { !delivered.contains($0.0) }
        guard !plan.isEmpty else { return [] }
        let now = Int(Date().timeIntervalSince1970)
        let alertUsers = Set(plan.filter { $0.1 == .alert }.map { $0.0.userId })
        let badges = try await jobs.unreadTotals(appId: job.appId, userIds: Array(alertUsers))
        let ringing = message.ringingMedia ?? "audio"
        return plan.map { target, kind in
            let payload =
                kind == .voip
                ? PushPayload.voip(for: message, media: ringing, preview: settings.preview, language: target.language)
                : PushPayload.alert(
                    for: message, preview: settings.preview, badge: badges[target.userId] ?? 0,
                    language: target.language)
            return (
                target,
                PushNotification(
                    vendor: target.vendor, token: target.token, environment: target.environment,
                    bundleId: target.bundleId, kind: kind, payload: payload, collapseId: String(message.id),
                    expiration: now + (kind == .voip ? configuration.voipTTLSeconds : configuration.alertTTLSeconds))
            )
        }
    }

    /// A call's pushes (migrations/0029) to its users' tokens this job has not pushed yet. They collapse by the
    /// call's id (a missed call replaces the ringing alert); an invite expires with the call's timeout, since a
    /// VoIP push that arrives after the ringing ended would ring a call that is over.
    private func callPushes(
        _ job: PushJobRepository.Job, _ call: CallPush, settings: PushSettings, credentials: PushCredentials
    ) async throws -> [(PushTarget, PushNotification)] {
        let targets = try await jobs.targets(job: job, call: call, staleSeconds: configuration.presenceStaleSeconds)
        let delivered = Set(targets.filter { $0.delivered }.map { $0.0 })
        let plan = PushPayload.plan(for: call, tokens: targets.map { $0.0 }.filter { credentials.delivers($0.vendor) })
            .filter { !delivered.contains($0.0) }
        guard !plan.isEmpty else { return [] }
        let callerName = try await jobs.callerName(appId: job.appId, userId: call.callerId)
        let now = Int(Date().timeIntervalSince1970)
        let ttl =
            call.action == .invite
            ? min(call.timeoutSeconds, configuration.voipTTLSeconds) : configuration.voipTTLSeconds
        return plan.map { target, kind in
            let payload =
                kind == .voip
                ? PushPayload.call(call, callerName: callerName, preview: settings.preview, language: target.language)
                : PushPayload.callAlert(
                    call, callerName: callerName, preview: settings.preview, language: target.language)
            return (
                target,
                PushNotification(
                    vendor: target.vendor, token: target.token, environment: target.environment,
                    bundleId: target.bundleId, kind: kind, payload: payload, collapseId: call.callId,
                    expiration: now + (kind == .voip ? ttl : configuration.alertTTLSeconds))
            )
        }
    }

    /// Hands the push to its vendor's sender; what the attempts log records of the answer.
    private func send(_ notification: PushNotification, credentials: PushCredentials) async -> PushAnswer {
        switch notification.vendor {
        case .apns, .apnsVoip:
            guard let apns = credentials.apns else {
                return PushAnswer(outcome: .rejected(reason: "no APNs credentials"))
            }
            return await sender.attempt(notification, credentials: apns)
        case .fcm:
            guard let fcm = credentials.fcm else { return PushAnswer(outcome: .rejected(reason: "no FCM credentials")) }
            return PushAnswer(outcome: await vendors.fcm.send(notification, credentials: fcm))
        case .hms:
            guard let hms = credentials.hms else { return PushAnswer(outcome: .rejected(reason: "no HMS credentials")) }
            return PushAnswer(outcome: await vendors.hms.send(notification, credentials: hms))
        }
    }

    /// Records what the vendors answered; a failure to record is logged, never fails the delivery.
    private func record(_ answers: [(PushTarget, PushNotification.Kind, PushAnswer)], job: PushJobRepository.Job) async
    {
        let recorded = answers.map { target, kind, answer in
            PushAttempt(
                appId: job.appId, userId: target.userId, messageId: job.messageId, vendor: target.vendor,
                token: target.token, kind: kind.rawValue, answer: answer)
        }
        do {
            try await attempts.record(recorded)
        } catch {
            logger.warning("recording push attempts failed", ["error": .string(String(describing: error))])
        }
    }

    /// The app's APNs credentials, with its key and certificates opened (cached while their sealed bytes are
    /// unchanged). The .p8 key, when there is one, serves both environments; certificates serve their own.
    func credentials(_ settings: PushSettings) -> APNsCredentials? {
        guard let bundleId = settings.bundleId, settings.hasAPNsCredentials else {
            logger.warning("push enabled without APNs credentials", ["app_id": .int(Int(settings.appId))])
            return nil
        }
        var key: P256.SigningKey?
        if settings.hasAPNsTokenKey, let sealed = settings.sealedKey {
            if let cached = openedKeys.withLock({ $0[settings.appId] }), cached.sealed == sealed {
                key = cached.key
            } else if let pem = keys.open(sealed, appId: settings.appId), let opened = try? P256.SigningKey(pem: pem) {
                openedKeys.withLock { $0[settings.appId] = (sealed, opened) }
                key = opened
            } else {
                logger.error(
                    "the app's APNs key does not open under this master key", ["app_id": .int(Int(settings.appId))])
                return nil
            }
        }
        var certificates: [PushEnvironment: TLSClientIdentity] = [:]
        for (environment, sealed) in settings.sealedCertificates where key == nil {
            let cacheKey = PushEnvironmentKey(appId: settings.appId, environment: environment)
            if let cached = openedCertificates.withLock({ $0[cacheKey] }), cached.sealed == sealed {
                certificates[environment] = cached.identity
            } else if let pem = keys.openCertificate(sealed, appId: settings.appId, environment: environment),
                let identity = try? TLSClientIdentity(pem: pem)
            {
                openedCertificates.withLock { $0[cacheKey] = (sealed, identity) }
                certificates[environment] = identity
            } else {
                logger.error(
                    "the app's APNs certificate does not open under this master key",
                    ["app_id": .int(Int(settings.appId)), "environment": .string(environment.rawValue)])
            }
        }
        guard key != nil || !certificates.isEmpty else { return nil }
        return APNsCredentials(
            appId: settings.appId, teamId: settings.teamId ?? "", keyId: settings.keyId ?? "", tokenKey: key,
            certificates: certificates, bundleId: bundleId, endpoint: settings.endpoint)
    }
}

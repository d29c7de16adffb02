import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyFiles
import ParleyHTTP
import ParleyJSON
import ParleyMessaging
import ParleyPostgres
import ParleyPush
import ParleyWebhooks

/// `parley app create|list|rotate-secret|update`: manages apps (tenants) in the database. Output goes through
/// `output` (stdout in the executable, a buffer in tests). The secret is printed by `create` and `rotate-secret`
/// only, exactly once; `list` never prints secrets.
public enum AppCommand {
    public static let usage = """
          parley app create --name NAME [--privacy-version N] [--session-policy one_per_platform|single|unlimited]
                                     create an app; prints its appKey and appSecret (the secret only this once)
          parley app list            list apps (never their secrets)
          parley app rotate-secret APP_KEY [--grace-seconds N]
                                     new secret, printed once; the old one keeps verifying for N seconds (default 3600)
          parley app update APP_KEY [--name NAME] [--privacy-version N] [--session-policy P] [--revoke-window SECONDS]
                               [--direct-messages anyone|friends]
                                     change settings; raising --privacy-version makes users consent again (code 1033);
                                     --revoke-window sets how long senders may revoke their messages;
                                     --direct-messages friends lets only friends chat one to one (1120 otherwise)
          parley app files APP_KEY [--max-bytes N] [--types TYPE,TYPE/*,...|--all-types]
                               [--user-quota-bytes N] [--app-quota-bytes N] [--server-quotas]
                                     the app's upload limits: largest file (at most PARLEY_FILES_MAX_BYTES), the MIME
                                     types it accepts, the bytes each user's uploads and the whole app may hold (0: no
                                     quota; --server-quotas: PARLEY_FILES_*_QUOTA_BYTES again); without options prints
                                     the current limits and the bytes the app stores
          parley app push APP_KEY [--apns-key-file F.p8 --key-id K --team-id T --bundle-id B] [--endpoint URL|default]
                                  [--apns-p12-sandbox F.p12] [--apns-p12-production F.p12] [--apns-p12-password-env VAR]
                                  [--preview full|sender|none] [--enable|--disable]
        """ + "\n" + PushVendorOptions.usage + "\n" + """
                                         offline push over APNs: the .p8 key (stored encrypted under the master key), its
                                         key id and team id, the bundle id, what alerts show, and whether push is on;
                                         or APNs certificates (.p12) per environment, used where there is no .p8 key (the
                                         certificate and its key stored encrypted; the password read from the environment
                                         variable VAR, never from the command line); --endpoint overrides Apple's (tests,
                                         relays); FCM: the Firebase service-account JSON (stored encrypted); HMS: the app
                                         id and client secret (stored encrypted); --remove-fcm/--remove-hms forget a
                                         vendor; without options prints the settings
              parley app reports APP_KEY [--limit N] [--json]
                                         the reports the app's users filed (users, messages, groups), newest first (default
                                         50, at most 1000); --json prints each whole, a reported message as it was then
            """ + "\n" + webhookUsage

    public struct UsageError: Error, CustomStringConvertible {
        public let description: String

        /// The first argument, the subcommand of `command`; a usage error naming `command` when there is none.
        static func subcommand(of arguments: [String], command: String, usage: String) throws(UsageError) -> String {
            guard let subcommand = arguments.first else {
                throw UsageError(description: "missing \(command) subcommand\n" + usage)
            }
            return subcommand
        }
    }

    /// Runs the subcommand; throws `UsageError` for bad arguments, other errors for failures.
    /// `environment` is where `--apns-p12-password-env` looks (the process's own; tests pass theirs).
    public static func run(
        _ arguments: [String], configuration: Configuration,
        environment: [String: String] = ProcessInfo.processInfo.environment, output: @escaping (String) -> Void
    ) async throws {
        let subcommand = try UsageError.subcommand(of: arguments, command: "app", usage: usage)
        var options = try Options(Array(arguments.dropFirst()))
        let auth = try configuration.authConfiguration()
        try await CommandContext.with(configuration) { context in
            try await context.requireSchema()
            let secrets = AppSecretBox(sealer: auth.sealer)
            let repository = AppRepository(database: context.database)
            switch subcommand {
            case "create":
                guard let name = options.take("--name"), !name.isEmpty else {
                    throw UsageError(description: "app create needs --name NAME")
                }
                let version = try options.takeInt("--privacy-version") ?? 0
                let policy = try options.takePolicy() ?? .onePerPlatform
                try options.finish()
                let (created, secret) = try await repository.create(
                    name: name, privacyVersion: version,
                    sessionPolicy: policy, secrets: secrets)
                describe(created, output: output)
                output("appSecret       \(secret)")
                output("")
                output(
                    "Store the app secret now: it is shown only this once and cannot be recovered "
                        + "(`parley app rotate-secret \(created.appKey)` makes a new one).")
            case "list":
                try options.finish()
                let apps = try await repository.list()
                output(
                    ["id", "appKey", "name", "privacyVersion", "sessionPolicy", "createdAt"].joined(separator: "\t"))
                for app in apps {
                    output(
                        [
                            String(app.id), app.appKey, app.name, String(app.privacyVersion),
                            app.sessionPolicy.rawValue,
                            ISO8601.format(app.createdAt),
                        ].joined(separator: "\t"))
                }
            case "rotate-secret":
                let key = try options.takePositional("APP_KEY")
                let grace = try options.takeInt("--grace-seconds") ?? auth.secretRotationGrace
                try options.finish()
                guard
                    let (rotated, secret) = try await repository.rotateSecret(
                        appKey: key, graceSeconds: max(0, grace),
                        secrets: secrets)
                else {
                    throw UsageError(description: "no app with key \(key)")
                }
                describe(rotated, output: output)
                output("appSecret       \(secret)")
                output("")
                output(
                    grace > 0
                        ? "The previous secret keeps working for \(grace) seconds."
                        : "The previous secret no longer works.")
            case "update":
                let key = try options.takePositional("APP_KEY")
                let name = options.take("--name")
                let version = try options.takeInt("--privacy-version")
                let policy = try options.takePolicy()
                let revokeWindow = try options.takeInt("--revoke-window")
                if let revokeWindow, !(0...(30 * 86400)).contains(revokeWindow) {
                    throw UsageError(description: "--revoke-window must be 0 to 2592000 seconds")
                }
                var directMessages: DirectMessagePolicy?
                if let raw = options.take("--direct-messages") {
                    guard let policy = DirectMessagePolicy(rawValue: raw) else {
                        throw UsageError(description: "--direct-messages must be anyone or friends")
                    }
                    directMessages = policy
                }
                try options.finish()
                guard
                    let updated = try await repository.update(
                        appKey: key, name: name, privacyVersion: version,
                        sessionPolicy: policy,
                        revokeWindowSeconds: revokeWindow, directMessages: directMessages)
                else {
                    throw UsageError(description: "no app with key \(key)")
                }
                describe(updated, output: output)
            case "files":
                let key = try options.takePositional("APP_KEY")
                let maxBytes = try options.takeInt("--max-bytes")
                let types = options.take("--types").map {
                    $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter {
                        !$0.isEmpty
                    }
                }
                let allTypes = options.takeFlag("--all-types")
                let userQuota = try options.takeInt("--user-quota-bytes")
                let appQuota = try options.takeInt("--app-quota-bytes")
                let serverQuotas = options.takeFlag("--server-quotas")
                try options.finish()
                if serverQuotas && (userQuota != nil || appQuota != nil) {
                    throw UsageError(description: "--server-quotas excludes --user-quota-bytes and --app-quota-bytes")
                }
                if let maxBytes, maxBytes < 1 { throw UsageError(description: "--max-bytes must be at least 1") }
                if let types, types.isEmpty || types.contains(where: { !$0.contains("/") }) {
                    throw UsageError(description: "--types takes MIME types or type/* patterns, comma-separated")
                }
                guard let target = try await repository.find(key: key) else {
                    throw UsageError(description: "no app with key \(key)")
                }
                let files = FileRepository(database: context.database)
                var update = FileRepository.SettingsUpdate()
                update.maxFileBytes = maxBytes.map(Int64.init)
                update.allowedTypes = types
                update.clearTypes = allTypes
                update.userQuotaBytes = userQuota.map(Int64.init)
                update.appQuotaBytes = appQuota.map(Int64.init)
                update.clearQuotas = serverQuotas
                if !update.isEmpty { try await files.updateSettings(appId: target.id, update) }
                let settings = try await files.settings(appId: target.id)
                func quota(_ own: Int64?, server: Int64) -> String {
                    let value = own ?? server
                    return (value == 0 ? "none" : String(value)) + (own == nil ? " (server default)" : "")
                }
                output("appKey          \(target.appKey)")
                output(
                    "maxFileBytes    \(settings.maxFileBytes.map(String.init) ?? "\(configuration.files.maxUploadBytes) (server default)")"
                )
                output("allowedTypes    \(settings.allowedTypes?.joined(separator: ",") ?? "(every type)")")
                output("userQuotaBytes  \(quota(settings.userQuotaBytes, server: configuration.files.userQuotaBytes))")
                output("appQuotaBytes   \(quota(settings.appQuotaBytes, server: configuration.files.appQuotaBytes))")
                output("storedBytes     \(settings.storedBytes)")
            case "reports":
                let key = try options.takePositional("APP_KEY")
                let limit = try options.takeInt("--limit") ?? 50
                let asJSON = options.takeFlag("--json")
                try options.finish()
                guard (1...1000).contains(limit) else { throw UsageError(description: "--limit must be 1-1000") }
                guard let target = try await repository.find(key: key) else {
                    throw UsageError(description: "no app with key \(key)")
                }
                let reports = try await ReportRepository(database: context.database).list(
                    appId: target.id, limit: limit)
                for report in reports {
                    if asJSON {
                        output(String(decoding: try JSONCoding.bytesEncoder.encode(report), as: UTF8.self))
                    } else {
                        let note = report.note.map { " (\($0.replacingOccurrences(of: "\n", with: " ")))" } ?? ""
                        output(
                            "\(report.id)  \(ISO8601.format(report.createdAt))  "
                                + "\(report.targetType.rawValue) \(report.targetId)  by \(report.reporterId): "
                                + "\(report.reason)\(note)")
                    }
                }
                if reports.isEmpty { output("no reports") }
            case "webhook":
                try await webhook(
                    &options, repository: repository, database: context.database, configuration: configuration,
                    output: output)
            case "describe":
                let key = try options.takePositional("APP_KEY")
                try options.finish()
                guard let target = try await repository.find(key: key) else {
                    throw UsageError(description: "no app with key \(key)")
                }
                describe(target, output: output)
                describeWebhook(
                    try await WebhookSettingsRepository(database: context.database).settings(appId: target.id),
                    output: output)
            case "push":
                try await push(
                    &options, repository: repository, database: context.database, masterKey: auth.masterKey,
                    environment: environment, output: output)
            default:
                throw UsageError(description: "unknown app subcommand: \(subcommand)\n" + usage)
            }
        }
    }

    /// `parley app push`: checks every value before storing any.
    private static func push(
        _ options: inout Options, repository: AppRepository, database: PostgresClient,
        masterKey: MasterKey, environment: [String: String], output: (String) -> Void
    ) async throws {
        let keyFile = options.take("--apns-key-file")
        let keyId = options.take("--key-id")
        let teamId = options.take("--team-id")
        let bundleId = options.take("--bundle-id")
        let endpoint = options.take("--endpoint")
        let previewName = options.take("--preview")
        let enable = options.takeFlag("--enable")
        let disable = options.takeFlag("--disable")
        let vendorOptions = try PushVendorOptions(&options)
        var p12Files: [PushEnvironment: String] = [:]
        for environment in PushEnvironment.allCases {
            p12Files[environment] = options.take("--apns-p12-\(environment.rawValue)")
        }
        let passwordVariable = options.take("--apns-p12-password-env")
        let key = try options.takePositional("APP_KEY") // after the options, so a value is never taken for it
        try options.finish()
        if enable && disable { throw UsageError(description: "--enable and --disable exclude each other") }
        let certificates = try readCertificates(
            p12Files,
            password: try passwordVariable.map { variable throws(UsageError) in
                guard !p12Files.isEmpty else {
                    throw UsageError(description: "--apns-p12-password-env goes with --apns-p12-sandbox or -production")
                }
                guard let password = environment[variable] else {
                    throw UsageError(description: "--apns-p12-password-env: \(variable) is not set")
                }
                return password
            })
        var update = PushSettingsRepository.Update()
        if let keyId {
            guard APNsIdentifiers.isTeamOrKeyID(keyId) else {
                throw UsageError(description: "--key-id must be 10 upper-case letters and digits")
            }
            update.keyId = keyId
        }
        if let teamId {
            guard APNsIdentifiers.isTeamOrKeyID(teamId) else {
                throw UsageError(description: "--team-id must be 10 upper-case letters and digits")
            }
            update.teamId = teamId
        }
        if let bundleId {
            guard APNsIdentifiers.isBundleID(bundleId) else {
                throw UsageError(description: "--bundle-id is not a bundle identifier")
            }
            update.bundleId = bundleId
        }
        if let endpoint {
            if endpoint == "default" {
                update.clearEndpoint = true
            } else {
                guard endpoint.hasPrefix("https://") || endpoint.hasPrefix("http://"), !endpoint.contains(" ") else {
                    throw UsageError(
                        description: "--endpoint must be an http:// or https:// URL, or `default` for Apple's")
                }
                update.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
            }
        }
        if let previewName {
            guard let preview = PushPreview(rawValue: previewName) else {
                throw UsageError(description: "--preview must be one of full, sender, none")
            }
            update.preview = preview
        }
        var pem: String?
        if let keyFile {
            guard let data = FileManager.default.contents(atPath: keyFile),
                let text = String(data: data, encoding: .utf8)
            else {
                throw UsageError(description: "cannot read --apns-key-file \(keyFile)")
            }
            do {
                _ = try P256.SigningKey(pem: text)
            } catch {
                throw UsageError(
                    description: "--apns-key-file \(keyFile) is not an APNs .p8 key (PEM, EC P-256): \(error)")
            }
            pem = text
        }
        guard let target = try await repository.find(key: key) else {
            throw UsageError(description: "no app with key \(key)")
        }
        let settings = PushSettingsRepository(database: database)
        let vendorSettings = PushVendorSettingsRepository(database: database)
        let box = PushKeyBox(masterKey: masterKey)
        let vendorUpdate = try vendorOptions.sealed(appId: target.id, box: box)
        if let pem { update.sealedKey = try box.seal(pem: pem, appId: target.id) }
        for (environment, identity) in certificates {
            update.sealedCertificates[environment] = try box.seal(
                certificatePEM: identity.pem, appId: target.id, environment: environment)
        }
        if enable || disable { update.enabled = enable }
        let changes =
            keyFile != nil || keyId != nil || teamId != nil || bundleId != nil || endpoint != nil
            || previewName != nil || enable || disable || vendorUpdate.changesAnything || !certificates.isEmpty
        if enable {
            // Enabling needs complete credentials, counting those stored before.
            var merged = try await settings.settings(appId: target.id) ?? PushSettings(appId: target.id)
            merged.teamId = update.teamId ?? merged.teamId
            merged.keyId = update.keyId ?? merged.keyId
            merged.sealedKey = update.sealedKey ?? merged.sealedKey
            merged.bundleId = update.bundleId ?? merged.bundleId
            merged.sealedCertificates.merge(update.sealedCertificates) { _, new in new }
            let android = vendorOptions.hasCredentials(over: try await vendorSettings.settings(appId: target.id))
            guard merged.hasAPNsCredentials || android else {
                throw UsageError(
                    description: "--enable needs --bundle-id and either --apns-key-file, --key-id and --team-id, or "
                        + "an --apns-p12-sandbox or --apns-p12-production certificate; or --fcm-service-account, or "
                        + "--hms-app-id and --hms-client-secret (now or stored before)")
            }
        }
        if vendorUpdate.changesAnything { try await vendorSettings.update(appId: target.id, vendorUpdate) }
        if changes { try await settings.update(appId: target.id, update) }
        let current = try await settings.settings(appId: target.id) ?? PushSettings(appId: target.id)
        output("appKey          \(target.appKey)")
        output("enabled         \(current.enabled)")
        output("teamId          \(current.teamId ?? "(none)")")
        output("keyId           \(current.keyId ?? "(none)")")
        output("apnsKey         \(current.sealedKey == nil ? "(none)" : "(stored, encrypted)")")
        for environment in PushEnvironment.allCases {
            let label = "apnsP12" + (environment == .sandbox ? "Sandbox" : "Production")
            let stored = current.sealedCertificates[environment] == nil ? "(none)" : "(stored, encrypted)"
            let used = current.hasAPNsTokenKey && stored != "(none)" ? "; unused while the .p8 key is set" : ""
            output(label.padding(toLength: max(16, label.count + 1), withPad: " ", startingAt: 0) + stored + used)
        }
        for (environment, identity) in certificates.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let expiry = identity.notAfter.map { ISO8601.format(Date(timeIntervalSince1970: TimeInterval($0))) }
            output(
                "stored \(environment.rawValue) certificate: \(identity.commonName ?? "(no common name)"), "
                    + "expires \(expiry ?? "(unknown)")")
        }
        output("bundleId        \(current.bundleId ?? "(none)")")
        output("preview         \(current.preview.rawValue)")
        output("endpoint        \(current.endpoint ?? "(Apple's, by each token's environment)")")
        PushVendorOptions.describe(try await vendorSettings.settings(appId: target.id), output: output)
    }

    /// The identities in the .p12 files, checked before anything is stored. The password comes from an environment
    /// variable (`--apns-p12-password-env`) so that it is in neither the shell's history nor the process list; it is
    /// never stored or printed.
    private static func readCertificates(_ files: [PushEnvironment: String], password: String?) throws
        -> [PushEnvironment: TLSClientIdentity]
    {
        var identities: [PushEnvironment: TLSClientIdentity] = [:]
        for (environment, path) in files {
            let flag = "--apns-p12-\(environment.rawValue)"
            guard let data = FileManager.default.contents(atPath: path) else {
                throw UsageError(description: "cannot read \(flag) \(path)")
            }
            do {
                identities[environment] = try TLSClientIdentity.pkcs12(Array(data), password: password)
            } catch {
                throw UsageError(
                    description: "\(flag) \(path): \(error) (a password goes in --apns-p12-password-env VAR)")
            }
        }
        return identities
    }

    private static func describe(_ app: AppSettings, output: (String) -> Void) {
        output("appId           \(app.id)")
        output("name            \(app.name)")
        output("appKey          \(app.appKey)")
        output("privacyVersion  \(app.privacyVersion)")
        output("sessionPolicy   \(app.sessionPolicy.rawValue)")
        if let window = app.revokeWindowSeconds { output("revokeWindow    \(window)s") }
        output("directMessages  \(app.directMessages.rawValue)")
    }

    /// `--flag value` options and positionals, consumed as they are read; leftovers are an error.
    struct Options {
        var items: [String]

        init(_ items: [String]) throws {
            self.items = items
        }

        mutating func take(_ flag: String) -> String? {
            guard let index = items.firstIndex(of: flag), index + 1 < items.count else { return nil }
            let value = items[index + 1]
            items.removeSubrange(index...(index + 1))
            return value
        }

        mutating func takeInt(_ flag: String) throws -> Int? {
            guard let raw = take(flag) else { return nil }
            guard let value = Int(raw), value >= 0 else {
                throw UsageError(description: "\(flag) needs a whole number ≥ 0")
            }
            return value
        }

        mutating func takeFlag(_ flag: String) -> Bool {
            guard let index = items.firstIndex(of: flag) else { return false }
            items.remove(at: index)
            return true
        }

        mutating func takePolicy() throws -> SessionPolicy? {
            guard let raw = take("--session-policy") else { return nil }
            guard let policy = SessionPolicy(rawValue: raw) else {
                throw UsageError(description: "--session-policy must be one of one_per_platform, single, unlimited")
            }
            return policy
        }

        mutating func takePositional(_ name: String) throws -> String {
            guard let index = items.firstIndex(where: { !$0.hasPrefix("--") }) else {
                throw UsageError(description: "missing \(name)")
            }
            return items.remove(at: index)
        }

        func finish() throws {
            if let first = items.first { throw UsageError(description: "unexpected argument: \(first)") }
        }
    }
}

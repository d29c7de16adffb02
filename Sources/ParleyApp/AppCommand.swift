import Foundation
import ParleyAuth
import ParleyFiles
import ParleyHTTP
import ParleyPostgres

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
                                 change settings; raising --privacy-version makes users consent again (code 1033);
                                 --revoke-window sets how long senders may revoke their messages
      parley app files APP_KEY [--max-bytes N] [--types TYPE,TYPE/*,...|--all-types]
                                 the app's upload limits: largest file (at most PARLEY_FILES_MAX_BYTES) and the
                                 MIME types it accepts; without options prints the current limits
    """

    public struct UsageError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs the subcommand; throws `UsageError` for bad arguments, other errors for failures.
    public static func run(_ arguments: [String], configuration: Configuration,
                           output: @escaping (String) -> Void) async throws {
        guard let subcommand = arguments.first else { throw UsageError(description: "missing app subcommand\n" + usage) }
        var options = try Options(Array(arguments.dropFirst()))
        let auth = try configuration.authConfiguration()
        var quiet = configuration
        quiet.accessLog = false
        let app = try Application(configuration: quiet)
        defer { app.group.shutdown() }
        let secrets = AppSecretBox(masterKey: auth.masterKey)
        let repository = AppRepository(database: app.database)
        do {
            try await requireSchema(app)
            switch subcommand {
            case "create":
                guard let name = options.take("--name"), !name.isEmpty else {
                    throw UsageError(description: "app create needs --name NAME")
                }
                let version = try options.takeInt("--privacy-version") ?? 0
                let policy = try options.takePolicy() ?? .onePerPlatform
                try options.finish()
                let (created, secret) = try await repository.create(name: name, privacyVersion: version,
                                                                    sessionPolicy: policy, secrets: secrets)
                describe(created, output: output)
                output("appSecret       \(secret)")
                output("")
                output("Store the app secret now: it is shown only this once and cannot be recovered "
                    + "(`parley app rotate-secret \(created.appKey)` makes a new one).")
            case "list":
                try options.finish()
                let apps = try await repository.list()
                output(["id", "appKey", "name", "privacyVersion", "sessionPolicy", "createdAt"].joined(separator: "\t"))
                for app in apps {
                    output([String(app.id), app.appKey, app.name, String(app.privacyVersion), app.sessionPolicy.rawValue,
                            ISO8601.format(app.createdAt)].joined(separator: "\t"))
                }
            case "rotate-secret":
                let key = try options.takePositional("APP_KEY")
                let grace = try options.takeInt("--grace-seconds") ?? auth.secretRotationGrace
                try options.finish()
                guard let (rotated, secret) = try await repository.rotateSecret(appKey: key, graceSeconds: max(0, grace),
                                                                                secrets: secrets) else {
                    throw UsageError(description: "no app with key \(key)")
                }
                describe(rotated, output: output)
                output("appSecret       \(secret)")
                output("")
                output(grace > 0 ? "The previous secret keeps working for \(grace) seconds." : "The previous secret no longer works.")
            case "update":
                let key = try options.takePositional("APP_KEY")
                let name = options.take("--name")
                let version = try options.takeInt("--privacy-version")
                let policy = try options.takePolicy()
                let revokeWindow = try options.takeInt("--revoke-window")
                if let revokeWindow, !(0...(30 * 86400)).contains(revokeWindow) {
                    throw UsageError(description: "--revoke-window must be 0 to 2592000 seconds")
                }
                try options.finish()
                guard let updated = try await repository.update(appKey: key, name: name, privacyVersion: version,
                                                                sessionPolicy: policy,
                                                                revokeWindowSeconds: revokeWindow) else {
                    throw UsageError(description: "no app with key \(key)")
                }
                describe(updated, output: output)
            case "files":
                let key = try options.takePositional("APP_KEY")
                let maxBytes = try options.takeInt("--max-bytes")
                let types = options.take("--types").map {
                    $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
                }
                let allTypes = options.takeFlag("--all-types")
                try options.finish()
                if let maxBytes, maxBytes < 1 { throw UsageError(description: "--max-bytes must be at least 1") }
                if let types, types.isEmpty || types.contains(where: { !$0.contains("/") }) {
                    throw UsageError(description: "--types takes MIME types or type/* patterns, comma-separated")
                }
                guard let target = try await repository.find(key: key) else {
                    throw UsageError(description: "no app with key \(key)")
                }
                let files = FileRepository(database: app.database)
                if maxBytes != nil || types != nil || allTypes {
                    try await files.updateLimits(appId: target.id, maxFileBytes: maxBytes.map(Int64.init),
                                                 allowedTypes: types, clearTypes: allTypes)
                }
                let limits = try await files.limits(appId: target.id)
                output("appKey          \(target.appKey)")
                output("maxFileBytes    \(limits.maxFileBytes.map(String.init) ?? "\(configuration.files.maxUploadBytes) (server default)")")
                output("allowedTypes    \(limits.allowedTypes?.joined(separator: ",") ?? "(every type)")")
            default:
                throw UsageError(description: "unknown app subcommand: \(subcommand)\n" + usage)
            }
        } catch {
            await app.database.shutdown()
            throw error
        }
        await app.database.shutdown()
    }

    private static func describe(_ app: AppSettings, output: (String) -> Void) {
        output("appId           \(app.id)")
        output("name            \(app.name)")
        output("appKey          \(app.appKey)")
        output("privacyVersion  \(app.privacyVersion)")
        output("sessionPolicy   \(app.sessionPolicy.rawValue)")
        if let window = app.revokeWindowSeconds { output("revokeWindow    \(window)s") }
    }

    static func requireSchema(_ app: Application) async throws {
        let migrator = Migrator(client: app.database, directory: app.configuration.migrationsDirectory, logger: app.logger)
        let status = try await migrator.status()
        guard status.pending.isEmpty else {
            throw Application.StartupError(description: "\(status.pending.count) migration(s) pending: run `parley migrate` first")
        }
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
            guard let value = Int(raw), value >= 0 else { throw UsageError(description: "\(flag) needs a whole number ≥ 0") }
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

import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyObservability
import ParleyPostgres
import ParleyUpdates

/// `parley release publish|list|update|withdraw`: an operator's way to the same service as the signed
/// `/api/admin/releases` routes, straight against the database. Running servers learn of each change through
/// NOTIFY at once. Output goes through `output` (stdout in the executable, a buffer in tests).
public enum ReleaseCommand {
    public static let usage = """
          parley release publish --app APP_KEY --platform ios --version-code N --version-name X [--channel C]
                                 [--notes TEXT] [--app-store-url URL] [--download-url URL] [--min-supported N] [--rollout P]
                                     publish a release (versionCode must be above every one published for the platform
                                     and channel); --min-supported forces older versions to update, --rollout P offers it
                                     to P% of devices (default 100)
          parley release list --app APP_KEY [--platform P] [--channel C] [--include-withdrawn]
                                     list releases, newest first
          parley release update --app APP_KEY RELEASE_ID [--notes TEXT] [--app-store-url URL] [--download-url URL]
                                [--min-supported N] [--rollout P]
                                     change a release (e.g. widen its rollout)
          parley release withdraw --app APP_KEY RELEASE_ID
                                     stop offering a release (its versionCode stays taken)
        """

    /// A refusal of the service (e.g. 1401), as the command prints it.
    public struct Refused: Error, CustomStringConvertible {
        public let code: Int
        public let description: String
    }

    /// Runs the subcommand; throws `AppCommand.UsageError` for bad arguments, `Refused` for refusals, other
    /// errors for failures.
    public static func run(
        _ arguments: [String], configuration: Configuration,
        output: @escaping (String) -> Void
    ) async throws {
        let subcommand = try AppCommand.UsageError.subcommand(of: arguments, command: "release", usage: usage)
        guard ["publish", "list", "update", "withdraw"].contains(subcommand) else {
            throw AppCommand.UsageError(description: "unknown release subcommand: \(subcommand)\n" + usage)
        }
        var options = try AppCommand.Options(Array(arguments.dropFirst()))
        guard let appKey = options.take("--app"), !appKey.isEmpty else {
            throw AppCommand.UsageError(description: "release \(subcommand) needs --app APP_KEY")
        }
        do {
            try await CommandContext.with(configuration) { context in
                let service = ReleaseService(
                    repository: ReleaseRepository(database: context.database),
                    logger: Logger(sink: LogSink(fd: 2, level: .warning)))
                try await context.requireSchema()
                guard let tenant = try await AppRepository(database: context.database).find(key: appKey) else {
                    throw AppCommand.UsageError(description: "no app with key \(appKey)")
                }
                try await perform(subcommand, options: &options, appId: tenant.id, service: service, output: output)
            }
        } catch {
            throw translated(error)
        }
    }

    private static func perform(
        _ subcommand: String, options: inout AppCommand.Options, appId: Int64,
        service: ReleaseService, output: (String) -> Void
    ) async throws {
        switch subcommand {
        case "publish":
            guard let platform = options.take("--platform") else {
                throw AppCommand.UsageError(description: "release publish needs --platform")
            }
            guard let versionCode = try options.takeInt("--version-code") else {
                throw AppCommand.UsageError(description: "release publish needs --version-code N")
            }
            guard let versionName = options.take("--version-name") else {
                throw AppCommand.UsageError(description: "release publish needs --version-name X")
            }
            let draft = try ReleaseDraft(
                platform: platform, channel: options.take("--channel"), versionCode: Int64(versionCode),
                versionName: versionName, releaseNotes: options.take("--notes"),
                appStoreUrl: options.take("--app-store-url"), downloadUrl: options.take("--download-url"),
                minSupportedVersionCode: try options.takeInt("--min-supported").map(Int64.init),
                rolloutPercent: try options.takeInt("--rollout"))
            try options.finish()
            describe(try await service.publish(appId: appId, draft), output: output)
        case "list":
            let platform = try options.take("--platform").map { raw throws(APIError) in try ReleaseInput.platform(raw) }
            let channel = try options.take("--channel").map { raw throws(APIError) in try ReleaseInput.channel(raw) }
            let includeWithdrawn = options.takeFlag("--include-withdrawn")
            try options.finish()
            let page = try await service.list(
                appId: appId, platform: platform, channel: channel,
                includeWithdrawn: includeWithdrawn, limit: ReleaseService.maxPageSize)
            output(
                [
                    "id", "platform", "channel", "versionCode", "versionName", "minSupported", "rollout", "publishedAt",
                    "withdrawnAt",
                ].joined(separator: "\t"))
            for release in page.releases {
                output(
                    [
                        String(release.id), release.platform, release.channel, String(release.versionCode),
                        release.versionName, release.minSupportedVersionCode.map(String.init) ?? "-",
                        "\(release.rolloutPercent)%", ISO8601.format(release.publishedAt),
                        release.withdrawnAt.map(ISO8601.format) ?? "-",
                    ].joined(separator: "\t"))
            }
        case "update":
            let changes = try ReleaseChanges(
                releaseNotes: options.take("--notes"),
                appStoreUrl: options.take("--app-store-url").map { .some($0) },
                downloadUrl: options.take("--download-url").map { .some($0) },
                minSupportedVersionCode: try options.takeInt("--min-supported").map { .some(Int64($0)) },
                rolloutPercent: try options.takeInt("--rollout"))
            let id = try releaseID(&options)
            try options.finish()
            guard !changes.isEmpty else {
                throw AppCommand.UsageError(
                    description: "release update needs something to change (--rollout, --notes, ...)")
            }
            describe(try await service.update(appId: appId, id: id, changes), output: output)
        default: // withdraw
            let id = try releaseID(&options)
            try options.finish()
            describe(try await service.withdraw(appId: appId, id: id), output: output)
        }
    }

    private static func releaseID(_ options: inout AppCommand.Options) throws -> Int64 {
        let raw = try options.takePositional("RELEASE_ID")
        guard let id = Int64(raw), id > 0 else {
            throw AppCommand.UsageError(description: "RELEASE_ID must be a number")
        }
        return id
    }

    /// Validation failures are usage errors; the service's refusals keep their code and message.
    private static func translated(_ error: any Error) -> any Error {
        guard let apiError = error as? APIError else { return error }
        if apiError.code == APIError.validationFailed.code {
            return AppCommand.UsageError(description: apiError.message.replacingOccurrences(of: "`", with: ""))
        }
        return Refused(code: apiError.code, description: "\(apiError.message) (code \(apiError.code))")
    }

    private static func describe(_ release: Release, output: (String) -> Void) {
        output("releaseId       \(release.id)")
        output("platform        \(release.platform)")
        output("channel         \(release.channel.isEmpty ? "(default)" : release.channel)")
        output("versionCode     \(release.versionCode)")
        output("versionName     \(release.versionName)")
        output("minSupported    \(release.minSupportedVersionCode.map(String.init) ?? "-")")
        output("rollout         \(release.rolloutPercent)%")
        if let url = release.appStoreUrl { output("appStoreUrl     \(url)") }
        if let url = release.downloadUrl { output("downloadUrl     \(url)") }
        output("publishedAt     \(ISO8601.format(release.publishedAt))")
        if let withdrawn = release.withdrawnAt { output("withdrawnAt     \(ISO8601.format(withdrawn))") }
    }
}

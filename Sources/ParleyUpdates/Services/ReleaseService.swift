import ParleyHTTP
import ParleyObservability

/// Publishing, listing, changing and withdrawing releases: shared by the admin routes and `parley release`.
/// After each change the local cache forgets the app's releases at once (the NOTIFY tells the other instances),
/// so a check right after a publish on this instance already sees it.
public struct ReleaseService: Sendable {
    public static let maxPageSize = 1000

    let repository: ReleaseRepository
    /// Called with the app id after every committed change.
    let changed: @Sendable (Int64) -> Void
    let logger: Logger

    public init(repository: ReleaseRepository, logger: Logger, changed: @escaping @Sendable (Int64) -> Void = { _ in })
    {
        self.repository = repository
        self.logger = logger
        self.changed = changed
    }

    public func publish(appId: Int64, _ draft: ReleaseDraft) async throws -> Release {
        let release = try await repository.publish(appId: appId, draft)
        changed(appId)
        logger.info(
            "release published",
            [
                "app_id": .int(Int(appId)), "release_id": .int(Int(release.id)),
                "platform": .string(release.platform), "channel": .string(release.channel),
                "version_code": .int(Int(release.versionCode)),
                "rollout_percent": .int(release.rolloutPercent),
            ])
        return release
    }

    public func release(appId: Int64, id: Int64) async throws -> Release {
        guard let release = try await repository.find(appId: appId, id: id) else { throw APIError.releaseNotFound }
        return release
    }

    /// The app's releases, newest first per platform and channel, and whether more than `limit` matched.
    public func list(
        appId: Int64, platform: String?, channel: String?, includeWithdrawn: Bool,
        limit: Int
    ) async throws -> (releases: [Release], hasMore: Bool) {
        let limit = min(max(1, limit), Self.maxPageSize)
        let rows = try await repository.list(
            appId: appId, platform: platform, channel: channel,
            includeWithdrawn: includeWithdrawn, limit: limit + 1)
        return (Array(rows.prefix(limit)), rows.count > limit)
    }

    public func update(appId: Int64, id: Int64, _ changes: ReleaseChanges) async throws -> Release {
        let release = try await repository.update(appId: appId, id: id, changes)
        changed(appId)
        logger.info(
            "release updated",
            [
                "app_id": .int(Int(appId)), "release_id": .int(Int(id)),
                "rollout_percent": .int(release.rolloutPercent),
            ])
        return release
    }

    /// Idempotent: withdrawing a withdrawn release answers it unchanged.
    public func withdraw(appId: Int64, id: Int64) async throws -> Release {
        guard let release = try await repository.withdraw(appId: appId, id: id) else { throw APIError.releaseNotFound }
        changed(appId)
        logger.info("release withdrawn", ["app_id": .int(Int(appId)), "release_id": .int(Int(id))])
        return release
    }
}

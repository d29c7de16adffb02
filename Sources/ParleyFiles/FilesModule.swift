import ParleyAuth
import ParleyHTTP
import ParleyLifecycle
import ParleyNet
import ParleyObservability
import ParleyPostgres

/// The file service, assembled: uploads, signed URLs, downloads, the attachment check messaging calls, and the
/// sweeper of unreferenced files.
public final class FilesModule: Sendable {
    public let configuration: FilesConfiguration
    public let storage: any BlobStorage
    public let repository: FileRepository
    public let access: FileAccessService
    public let signer: FileURLSigner
    public let avatars: AvatarService
    let uploads: UploadService
    let urls: FileURLService
    let downloads: DownloadService
    let authenticator: Authenticator
    let logger: Logger

    /// `signingSecret`: the server's secret for download URLs (derived from the master key by the caller).
    public init(
        configuration: FilesConfiguration, storage: any BlobStorage, database: PostgresClient,
        authenticator: Authenticator, signingSecret: [UInt8], logger: Logger,
        metrics: MetricsRegistry = MetricsRegistry()
    ) {
        self.configuration = configuration
        self.storage = storage
        self.authenticator = authenticator
        self.logger = logger.with("component", "files")
        repository = FileRepository(database: database)
        access = FileAccessService(repository: repository)
        avatars = AvatarService(repository: repository)
        signer = FileURLSigner(secret: signingSecret)
        urls = FileURLService(configuration: configuration, signer: signer, repository: repository)
        uploads = UploadService(
            configuration: configuration, repository: repository, storage: storage, urls: urls,
            logger: self.logger, uploadRate: TokenBucketLimiter(ratePerMinute: configuration.uploadsPerMinute),
            refusals: QuotaRefusals(metrics: metrics))
        downloads = DownloadService(
            signer: signer, repository: repository, storage: storage,
            cacheLimit: configuration.metadataCacheEntries, logger: self.logger)
    }

    /// The avatar check auth and messaging call (see `AvatarAuthorizer`).
    public var avatarAuthorizer: AvatarAuthorizer {
        { [avatars] key, holder, appId, userId in
            try await avatars.adopt(objectKey: key, for: holder, appId: appId, by: userId)
        }
    }

    public func register(on router: inout Router) {
        FileController(
            authenticator: authenticator, configuration: configuration, uploads: uploads, urls: urls,
            downloads: downloads
        ).register(on: &router)
    }

    /// What files runs while the server serves: the spool and the storage made ready, and the sweeper every
    /// `sweepIntervalSeconds` (unless zero) on the coordinator.
    public func backgroundServices(coordinator: CoordinatorRole) -> [any Service] {
        var services: [any Service] = [
            StoragePreparation(configuration: configuration, storage: storage, logger: logger)
        ]
        if configuration.sweepIntervalSeconds > 0 {
            let logger = logger
            services.append(
                PeriodicService(
                    "file sweeper", every: .seconds(configuration.sweepIntervalSeconds), on: .coordinator(coordinator)
                ) { [self] in
                    do {
                        _ = try await sweep()
                    } catch {
                        logger.warning("file sweep failed", ["error": .string(String(describing: error))])
                    }
                })
        }
        return services
    }

    public struct SweepReport: Sendable, Equatable {
        public var files = 0
        public var blobs = 0
        public var objectsDeleted = 0
        public init() {}
    }

    /// One pass: unreferenced files past the grace period, then blobs no file uses, then their storage objects.
    /// Safe on several instances at once (row locks, SKIP LOCKED, idempotent deletes).
    public func sweep() async throws -> SweepReport {
        var report = SweepReport()
        let grace = configuration.sweepGraceSeconds
        while true {
            let n = try await repository.sweepFiles(graceSeconds: grace)
            report.files += n
            if n < 1000 { break }
        }
        while true {
            let n = try await repository.sweepBlobs(graceSeconds: grace)
            report.blobs += n
            if n < 1000 { break }
        }
        while true {
            let keys = try await repository.garbage()
            if keys.isEmpty { break }
            var deleted: [String] = []
            for key in keys {
                do {
                    try await storage.delete(key: key)
                    downloads.forgetBlob(storageKey: key)
                    deleted.append(key)
                } catch {
                    logger.warning(
                        "deleting a storage object failed",
                        [
                            "storage_key": .string(key),
                            "error": .string(String(describing: error)),
                        ])
                    try await repository.garbageFailed(key)
                }
            }
            try await repository.garbageCollected(deleted)
            report.objectsDeleted += deleted.count
            if deleted.count < keys.count { break }
        }
        if report != SweepReport() {
            logger.info(
                "file sweep",
                [
                    "files": .int(report.files), "blobs": .int(report.blobs),
                    "objects_deleted": .int(report.objectsDeleted),
                ])
        }
        return report
    }
}

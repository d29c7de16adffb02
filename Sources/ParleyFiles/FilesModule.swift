import Foundation
import Glibc
import ParleyAuth
import ParleyHTTP
import ParleyMessaging
import ParleyObservability
import ParleyPostgres
import Synchronization

/// The file service, assembled: uploads, signed URLs, downloads, the attachment check messaging calls, and the
/// sweeper of unreferenced files.
public final class FilesModule: Sendable {
    public let configuration: FilesConfiguration
    public let storage: any BlobStorage
    public let repository: FileRepository
    public let access: FileAccessService
    public let signer: FileURLSigner
    let uploads: UploadService
    let urls: FileURLService
    let downloads: DownloadService
    let authenticator: Authenticator
    let logger: Logger
    private let sweeping = Mutex<Task<Void, Never>?>(nil)

    /// `signingSecret`: the server's secret for download URLs (derived from the master key by the caller).
    public init(configuration: FilesConfiguration, storage: any BlobStorage, database: PostgresClient,
                authenticator: Authenticator, signingSecret: [UInt8], logger: Logger) {
        self.configuration = configuration
        self.storage = storage
        self.authenticator = authenticator
        self.logger = logger.with("component", "files")
        repository = FileRepository(database: database)
        access = FileAccessService(repository: repository)
        signer = FileURLSigner(secret: signingSecret)
        urls = FileURLService(configuration: configuration, signer: signer, repository: repository)
        uploads = UploadService(configuration: configuration, repository: repository, storage: storage, urls: urls,
                                logger: self.logger)
        downloads = DownloadService(signer: signer, repository: repository, storage: storage,
                                    cacheLimit: configuration.metadataCacheEntries, logger: self.logger)
    }

    public func register(on router: inout Router) {
        FileController(authenticator: authenticator, configuration: configuration, uploads: uploads, urls: urls,
                       downloads: downloads).register(on: &router)
    }

    /// Removes spool files a crash left behind, then sweeps every `sweepIntervalSeconds`.
    public func start() {
        do {
            try FileManager.default.createDirectory(atPath: configuration.spoolDirectory, withIntermediateDirectories: true)
        } catch {
            logger.error("cannot create the upload spool directory", ["path": .string(configuration.spoolDirectory),
                                                                       "error": .string(String(describing: error))])
        }
        removeStaleSpoolFiles(olderThan: 3600)
        let storage = storage
        let logger = logger
        Task {
            do {
                try await storage.prepare()
            } catch {
                logger.error("file storage is not ready", ["storage": .string(storage.kind),
                                                            "error": .string(String(describing: error))])
            }
        }
        guard configuration.sweepIntervalSeconds > 0 else { return }
        let interval = configuration.sweepIntervalSeconds
        let task = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(interval))
                if Task.isCancelled { break }
                do {
                    _ = try await sweep()
                } catch {
                    logger.warning("file sweep failed", ["error": .string(String(describing: error))])
                }
            }
        }
        sweeping.withLock { $0 = task }
    }

    public func stop() {
        sweeping.withLock { $0?.cancel() }
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
                    logger.warning("deleting a storage object failed", ["storage_key": .string(key),
                                                                         "error": .string(String(describing: error))])
                    try await repository.garbageFailed(key)
                }
            }
            try await repository.garbageCollected(deleted)
            report.objectsDeleted += deleted.count
            if deleted.count < keys.count { break }
        }
        if report != SweepReport() {
            logger.info("file sweep", ["files": .int(report.files), "blobs": .int(report.blobs),
                                       "objects_deleted": .int(report.objectsDeleted)])
        }
        return report
    }

    /// Upload spool files older than `seconds` belong to no live upload (a crash or a kill mid-upload).
    func removeStaleSpoolFiles(olderThan seconds: Int) {
        let directory = configuration.spoolDirectory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let cutoff = time(nil) - seconds
        for name in names where name.hasPrefix("upload-") {
            var info = stat()
            let path = "\(directory)/\(name)"
            if stat(path, &info) == 0 && info.st_mtim.tv_sec < cutoff { unlink(path) }
        }
    }
}

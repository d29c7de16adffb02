import Foundation
import Glibc
import ParleyLifecycle
import ParleyNet
import ParleyObservability

/// Gets file storage ready. Before anything serves, the upload spool directory exists and spool files a crash or a
/// kill left behind are gone. Then the storage itself (local directories, or the S3 bucket) is prepared in the
/// background, as serving need not wait for a remote store: a failure is logged, and uploads fail until it works.
struct StoragePreparation: Service {
    let configuration: FilesConfiguration
    let storage: any BlobStorage
    let logger: Logger

    var name: String { "file storage" }

    func prepare() {
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.spoolDirectory, withIntermediateDirectories: true)
        } catch {
            logger.error(
                "cannot create the upload spool directory",
                [
                    "path": .string(configuration.spoolDirectory),
                    "error": .string(String(describing: error)),
                ])
        }
        removeStaleSpoolFiles(olderThan: 3600)
    }

    func run() async {
        do {
            try await storage.prepare()
        } catch {
            logger.error(
                "file storage is not ready",
                [
                    "storage": .string(storage.kind),
                    "error": .string(String(describing: error)),
                ])
        }
        await Task.waitUntilCancelled()
    }

    /// Upload spool files older than `seconds` belong to no live upload.
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

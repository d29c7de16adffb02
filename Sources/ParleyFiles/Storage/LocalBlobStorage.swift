import Foundation
import Glibc

/// Blobs as files under a directory (default `.parley/files`): `<root>/blobs/<key>`. A blob is written to the
/// spool (same file system), fsynced, then renamed into place, and the directory is fsynced, so a crash leaves
/// either the whole blob or none of it.
public struct LocalBlobStorage: BlobStorage {
    public let kind = "local"
    public let root: String

    /// Folders are created on the first write, so commands that never store (`parley app ...`) leave no trace.
    public init(root: String) {
        self.root = root
    }

    public func path(forKey key: String) -> String { "\(root)/blobs/\(key)" }

    public func store(spoolPath: String, key: String, size: Int64, sha256Hex: String, contentType: String) async throws
    {
        let target = path(forKey: key)
        try await BlockingIO.run {
            defer { unlink(spoolPath) }
            let directory = (target as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Self.fsync(path: spoolPath, flags: O_RDONLY)
            guard rename(spoolPath, target) == 0 else { throw StorageError.io("rename to \(target)", errno) }
            try Self.fsync(path: directory, flags: O_RDONLY | O_DIRECTORY)
        }
    }

    public func delete(key: String) async throws {
        let target = path(forKey: key)
        try await BlockingIO.run {
            if unlink(target) != 0 && errno != ENOENT { throw StorageError.io("unlink \(target)", errno) }
        }
    }

    public func exists(key: String) async throws -> Bool {
        access(path(forKey: key), F_OK) == 0
    }

    public func download(key: String, expiresAt: Int64, contentType: String, contentDisposition: String) throws
        -> BlobDownload
    {
        .localFile(path: path(forKey: key))
    }

    public func localPath(key: String) -> String? { path(forKey: key) }

    static func fsync(path: String, flags: Int32) throws {
        let fd = open(path, flags | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError.io("open \(path)", errno) }
        defer { close(fd) }
        guard Glibc.fsync(fd) == 0 else { throw StorageError.io("fsync \(path)", errno) }
    }
}

public enum StorageError: Error, CustomStringConvertible {
    case io(String, Int32)
    case backend(String)

    public var description: String {
        switch self {
        case .io(let what, let code): "\(what): \(String(cString: strerror(code)))"
        case .backend(let message): message
        }
    }
}

/// Runs blocking file-system work (fsync, rename, large writes) on Dispatch's pool, never on an event loop.
enum BlockingIO {
    static let queue = DispatchQueue(label: "parley.files.io", attributes: .concurrent)

    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}

import Foundation
import Glibc
import ParleyCrypto
import ParleyHTTP
import ParleyObservability

/// Receives one upload's bytes into a private temp file in the spool directory, hashing and counting them on the
/// way. Writes happen on Dispatch's pool (a slow disk never stalls an event loop), gathered into 256 KiB writes.
/// Nothing of the upload is held in memory beyond that buffer and the first 4 KiB (for type detection).
///
/// The file is created with the first byte, not with the request: a client that opens uploads and sends nothing
/// (or only headers) costs no descriptor and no file.
final class SpoolWriter: @unchecked Sendable {
    // Mutated by one task at a time (the upload's handler awaits each step), on whichever thread runs it.
    let path: String
    private let logger: Logger?
    /// -1 until the first byte arrives.
    private var fd: Int32 = -1
    private var hasher: SHA256.Hasher? = SHA256.Hasher()
    private var pending: [UInt8] = []
    private(set) var size: Int64 = 0
    private(set) var prefix: [UInt8] = []
    private var closed = false

    static let prefixBytes = 4096
    static let writeBatch = 256 * 1024

    init(directory: String, logger: Logger? = nil) {
        path = "\(directory)/upload-\(Hex.encode(SecureRandom.bytes(12))).part"
        self.logger = logger
    }

    deinit {
        if !closed && fd >= 0 { close(fd) }
    }

    /// Whether the spool file exists yet (it is created with the first byte).
    var isOpen: Bool { fd >= 0 }

    private func openFile() throws {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd < 0 else { return }
        let error = StorageError.io("open \(path)", errno)
        logger?.error("cannot create an upload spool file", ["error": .string(String(describing: error))])
        throw APIError.fileStorageUnavailable
    }

    /// Appends bytes; `limit` is the largest size the upload may reach (413 past it).
    func append(_ bytes: [UInt8], limit: Int64) async throws {
        guard !bytes.isEmpty else { return }
        if fd < 0 { try openFile() }
        size += Int64(bytes.count)
        guard size <= limit else { throw FileUploadLimitExceeded(size: size) }
        if prefix.count < Self.prefixBytes { prefix.append(contentsOf: bytes.prefix(Self.prefixBytes - prefix.count)) }
        pending.append(contentsOf: bytes)
        if pending.count >= Self.writeBatch { try await writePending() }
    }

    /// Writes what is left and returns the content's digest; the file stays for `BlobStorage.store`.
    func finish() async throws -> SpooledContent {
        if fd < 0 { try openFile() } // an empty file still has a path to hand on
        try await writePending()
        closed = true
        close(fd)
        return SpooledContent(path: path, size: size, sha256Hex: Hex.encode(hasher.take()!.finalize()), prefix: prefix)
    }

    /// Removes the partial file (a failed, refused or interrupted upload leaves nothing).
    func discard() {
        guard fd >= 0 else { return } // never created
        if !closed { close(fd) }
        closed = true
        unlink(path)
    }

    private func writePending() async throws {
        guard !pending.isEmpty else { return }
        let chunk = pending
        pending.removeAll(keepingCapacity: true)
        hasher?.update(chunk)
        let fd = self.fd
        let path = self.path
        try await BlockingIO.run {
            try chunk.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw StorageError.io("write \(path)", errno)
                    }
                    offset += n
                }
            }
        }
    }
}

/// `size`: what the upload had reached, so the caller tells a file too large from a quota used up.
struct FileUploadLimitExceeded: Error {
    var size: Int64
}

/// A finished spool file and what was learned while writing it.
struct SpooledContent: Sendable {
    var path: String
    var size: Int64
    var sha256Hex: String
    var prefix: [UInt8]
}

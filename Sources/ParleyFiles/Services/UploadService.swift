import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyHTTP
import ParleyJSON
import ParleyObservability

/// What an upload answers (`POST`/`PUT /api/files`): the shape the iOS SDK's `FileSDK.upload` and the
/// OpenIM-style clients read.
public struct UploadedFile: Sendable, Encodable, Equatable {
    public var objectKey: String
    public var url: String
    public var urlExpireAt: String
    public var thumbnailKey: String?
    public var thumbnailUrl: String?
    public var hash: String
    public var size: Int64
    public var mimeType: String
    public var ext: String
    public var name: String
}

/// One incoming file of an upload, once its bytes are spooled.
struct ReceivedFile: Sendable {
    var content: SpooledContent
    var name: String
    var declaredType: String?
}

/// Turns spooled uploads into stored files: detects the type, enforces the app's limits, stores the content once
/// per app (dedup by SHA-256), records the rows and signs the first URL.
public struct UploadService: Sendable {
    let configuration: FilesConfiguration
    let repository: FileRepository
    let storage: any BlobStorage
    let urls: FileURLService
    let logger: Logger
    /// Uploads per user, counted by each instance in memory (as the auth routes' buckets are).
    let uploadRate: TokenBucketLimiter<UploaderKey>
    let refusals: QuotaRefusals

    struct UploaderKey: Hashable, Sendable {
        var appId: Int64
        var userId: String
    }

    /// Takes one of the uploader's tokens (1317 + Retry-After when there is none), before anything is read.
    func admit(appId: Int64, userId: String) throws(APIError) {
        guard uploadRate.isEnabled, let wait = uploadRate.acquire(UploaderKey(appId: appId, userId: userId)) else {
            return
        }
        refusals.count(.uploadRate)
        throw APIError.uploadRateLimited(retryAfterSeconds: wait)
    }

    func limits(appId: Int64, userId: String) async throws -> FileLimits {
        try await repository.limits(appId: appId, userId: userId, defaults: configuration)
    }

    /// The refusal of a quota, counted.
    func refuse(_ kind: QuotaRefusals.Kind, _ quota: StorageQuota) -> APIError {
        refusals.count(kind)
        return quota.error(kind)
    }

    /// A spool for one incoming file; its file is created with the first byte (1308 if it cannot be).
    func spool() -> SpoolWriter {
        SpoolWriter(directory: configuration.spoolDirectory, logger: logger)
    }

    /// Stores the file (and its thumbnail) for `ownerId`. The spool files are consumed whatever happens.
    func commit(
        appId: Int64, ownerId: String, file: ReceivedFile, thumbnail: ReceivedFile?, limits: FileLimits,
        baseURL: String
    ) async throws -> UploadedFile {
        var pending = [file.content.path] + (thumbnail.map { [$0.content.path] } ?? [])
        defer { for path in pending { unlink(path) } }
        // Before anything is stored, against the usage read when the upload began; the commits check again (a
        // thumbnail committed before its file is refused stays until the sweeper removes it, unreferenced).
        let total = file.content.size + (thumbnail?.content.size ?? 0)
        if let kind = limits.quota.exceeded(adding: total, newContent: false) {
            throw refuse(kind, limits.quota)
        }
        let type = MIMESniffer.detect(prefix: file.content.prefix, declaredType: file.declaredType, filename: file.name)
        guard limits.allows(mimeType: type.mimeType) else {
            throw APIError.fileTypeNotAllowed.with(
                message: "files of type \(type.mimeType) are not allowed in this app")
        }
        var thumbnailKey: String?
        if let thumbnail {
            let thumbType = MIMESniffer.detect(
                prefix: thumbnail.content.prefix, declaredType: thumbnail.declaredType,
                filename: thumbnail.name)
            guard thumbType.mimeType.hasPrefix("image/") else {
                throw APIError.fileTypeNotAllowed.with(
                    message: "a thumbnail must be an image, not \(thumbType.mimeType)")
            }
            let key = ObjectKey.generate(appId: appId)
            pending.removeAll { $0 == thumbnail.content.path }
            try await store(
                appId: appId, content: thumbnail.content, quota: limits.quota,
                files: [
                    FileRepository.NewFile(
                        objectKey: key, ownerId: ownerId, mimeType: thumbType.mimeType, ext: thumbType.ext,
                        name: thumbnail.name, thumbnailKey: nil)
                ])
            thumbnailKey = key
        }
        let objectKey = ObjectKey.generate(appId: appId)
        pending.removeAll { $0 == file.content.path }
        try await store(
            appId: appId, content: file.content, quota: limits.quota,
            files: [
                FileRepository.NewFile(
                    objectKey: objectKey, ownerId: ownerId, mimeType: type.mimeType, ext: type.ext, name: file.name,
                    thumbnailKey: thumbnailKey)
            ])
        let expiresAt = Int64(Date().timeIntervalSince1970) + Int64(configuration.defaultURLTTLSeconds)
        return UploadedFile(
            objectKey: objectKey, url: urls.url(objectKey: objectKey, expiresAt: expiresAt, baseURL: baseURL),
            urlExpireAt: ISO8601.format(Date(timeIntervalSince1970: TimeInterval(expiresAt))),
            thumbnailKey: thumbnailKey,
            thumbnailUrl: thumbnailKey.map { urls.url(objectKey: $0, expiresAt: expiresAt, baseURL: baseURL) },
            hash: file.content.sha256Hex, size: file.content.size, mimeType: type.mimeType,
            ext: type.ext, name: file.name)
    }

    /// Reuses the app's blob of this content, or moves the spool file into storage as a new blob; then records
    /// the file rows. Consumes the spool file. A quota the commit finds exceeded leaves nothing: the rows roll back
    /// and an object stored for them is queued for deletion.
    private func store(
        appId: Int64, content: SpooledContent, quota: StorageQuota, files: [FileRepository.NewFile]
    ) async throws {
        let storageKey: String
        var storedNow = false
        if let existing = try await repository.reuseBlob(appId: appId, sha256: content.sha256Hex) {
            unlink(content.path)
            storageKey = existing
        } else {
            // A new content: the app's quota too, before the bytes are stored.
            if let kind = quota.exceeded(adding: content.size, newContent: true) {
                unlink(content.path)
                throw refuse(kind, quota)
            }
            storedNow = true
            storageKey =
                "\(appId)/\(content.sha256Hex.prefix(2))/\(content.sha256Hex)-\(Hex.encode(SecureRandom.bytes(4)))"
            do {
                try await storage.store(
                    spoolPath: content.path, key: storageKey, size: content.size,
                    sha256Hex: content.sha256Hex, contentType: "application/octet-stream")
            } catch {
                logger.error(
                    "storing an upload failed",
                    [
                        "storage": .string(storage.kind),
                        "error": .string(String(describing: error)),
                    ])
                throw APIError.fileStorageUnavailable
            }
        }
        do {
            _ = try await repository.insert(
                appId: appId, sha256: content.sha256Hex, size: content.size,
                storageKey: storageKey, files: files, quota: quota)
        } catch let refused as StorageQuotaExceeded {
            if storedNow { try await repository.queueGarbage(storageKey) }
            throw refuse(refused.kind, quota)
        }
    }

    /// A client's file name made safe to keep and show: the last path component, no control characters, at most
    /// 255 bytes; `file` when nothing is left.
    static func cleanName(_ raw: String?) -> String {
        guard let raw else { return "file" }
        let last = raw.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var name = String(
            String.UnicodeScalarView(
                last.unicodeScalars.filter {
                    $0.value >= 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value)
                })
        ).trimmingCharacters(in: .whitespaces)
        while name.utf8.count > 255 { name.removeLast() }
        if name.isEmpty || name == "." || name == ".." { return "file" }
        return name
    }
}

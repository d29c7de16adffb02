import Foundation
import Glibc
import ParleyHTTP
import ParleyNet
import ParleyObservability
import Synchronization

/// Serves `GET /files/{objectKey}?exp=&d=&sig=`: checks the signature, finds the file (metadata cached in memory:
/// a file's row never changes, and a swept file's blob is gone, which answers 404), and answers with the bytes
/// (sendfile), a range of them, 304, or a redirect to the backend's own presigned URL. The type and disposition
/// follow `DownloadSafety`: inline only when the URL grants it and the file is a raster image, audio or video.
public final class DownloadService: Sendable {
    let signer: FileURLSigner
    let repository: FileRepository
    let storage: any BlobStorage
    let logger: Logger
    private let cacheLimit: Int
    /// Each event loop keeps its own caches: a download then takes no lock another core holds and touches no
    /// reference count another core is bumping. Invalidation (rare) walks every loop's caches.
    private let caches = LoopLocal { Caches() }
    static let cacheSeconds: Int64 = 300

    final class Caches: Sendable {
        let metadata = Mutex<[String: CachedFile]>([:])
        let smallBlobs = SmallBlobCache()
        let openBlobs = OpenBlobCache()
        /// The last `Cache-Control` value made: a hot URL asks for the same max-age all second long.
        let cacheControl = Mutex<(maxAge: Int64, value: String)>((-1, ""))

        func cacheControl(maxAge: Int64) -> String {
            cacheControl.withLock { last in
                if last.maxAge != maxAge { last = (maxAge, "private, max-age=\(maxAge)") }
                return last.value
            }
        }
    }

    /// A file's metadata and the header values derived from it, computed once per load. A class: a cache hit
    /// costs one reference, not one per string.
    final class CachedFile: Sendable {
        let file: StoredFile
        let etag: String
        let lastModified: String
        /// The `Content-Type` it goes out with (`DownloadSafety.servedType`).
        let servedType: String
        /// What a URL granting `inline` gets: `inline` for raster images, audio and video, else `attachment`.
        let inlineDisposition: String
        let attachmentDisposition: String
        let loadedAt: Int64
        /// Where the blob lies when storage is local.
        let localPath: String?

        /// The fixed fields of a 200/206 answer, for a URL granting inline (the same as `attachmentHeaders` unless
        /// the file may display inline) and for one granting an attachment.
        let inlineHeaders: HTTPStaticHeaders
        let attachmentHeaders: HTTPStaticHeaders

        /// What a 304 or a redirect repeats of the file's validators.
        func validatorHeaders(cacheControl: String) -> HTTPHeaders {
            var headers = HTTPHeaders()
            headers.reserveCapacity(6)
            headers.appendLowercased(name: "etag", value: etag)
            headers.appendLowercased(name: "last-modified", value: lastModified)
            headers.appendLowercased(name: "cache-control", value: cacheControl)
            headers.appendLowercased(name: "accept-ranges", value: "bytes")
            return headers
        }

        init(file: StoredFile, localPath: String?, loadedAt: Int64) {
            let etag = EntityTag.quoted(file.sha256)
            let lastModified = ResponseSerializer.httpDate(time_t(file.createdAt.timeIntervalSince1970))
            let servedType = DownloadSafety.servedType(stored: file.mimeType)
            let attachment = ContentDisposition.value(disposition: .attachment, filename: file.name)
            let inline =
                DownloadSafety.mayDisplayInline(servedType: servedType)
                ? ContentDisposition.value(disposition: .inline, filename: file.name) : attachment
            func fields(_ disposition: String) -> HTTPStaticHeaders {
                HTTPStaticHeaders(
                    [
                        ("etag", etag), ("last-modified", lastModified), ("accept-ranges", "bytes"),
                        ("content-type", servedType), ("content-disposition", disposition),
                    ] + DownloadSafety.headerFields)
            }
            self.localPath = localPath
            self.file = file
            self.etag = etag
            self.lastModified = lastModified
            self.servedType = servedType
            inlineDisposition = inline
            attachmentDisposition = attachment
            self.loadedAt = loadedAt
            attachmentHeaders = fields(attachment)
            inlineHeaders = inline == attachment ? attachmentHeaders : fields(inline)
        }
    }

    init(signer: FileURLSigner, repository: FileRepository, storage: any BlobStorage, cacheLimit: Int, logger: Logger) {
        self.signer = signer
        self.repository = repository
        self.storage = storage
        self.cacheLimit = cacheLimit
        self.logger = logger
    }

    /// The answer when the file's metadata is in memory (no await, no task); nil when it must be loaded.
    func serveImmediately(_ request: HTTPRequest) throws -> HTTPResponse? {
        let (key, expiresAt, granted, now) = try verify(request)
        guard let entry = cached(key: key, now: now) else { return nil }
        return try respond(request, key: key, entry: entry, expiresAt: expiresAt, granted: granted, now: now)
    }

    func serve(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (key, expiresAt, granted, now) = try verify(request)
        guard let entry = try await metadata(key: key, now: now) else { throw APIError.fileNotFound }
        return try respond(request, key: key, entry: entry, expiresAt: expiresAt, granted: granted, now: now)
    }

    /// The object key of a well-formed, correctly signed, unexpired download URL, its expiry, the disposition it
    /// grants and the time now.
    private func verify(_ request: HTTPRequest) throws -> (
        key: String, expiresAt: Int64, granted: ContentDisposition.Kind, now: Int64
    ) {
        let prefix = "/files/"
        let path = request.path
        guard path.hasPrefix(prefix) else { throw APIError.invalidObjectKey }
        let key = String(path.dropFirst(prefix.count))
        // Valid keys never need escaping: anything encoded (`%2F`, `%00`, `%2E%2E`) or out of shape is refused.
        guard ObjectKey.isValid(key) else { throw APIError.invalidObjectKey }
        // Read in place (valid expiries and signatures hold no escape); one that does not decode fails the check.
        let query = request.query
        let exp = try? query.value(for: "exp")
        let now = Int64(time(nil))
        switch signer.verify(
            objectKey: key, expiresAt: exp, disposition: try? query.value(for: "d"),
            signature: try? query.value(for: "sig"), now: now)
        {
        case .invalid: throw APIError.fileURLInvalid
        case .expired: throw APIError.fileURLExpired
        case .valid(let granted): return (key, Int64(exp!)!, granted, now)
        }
    }

    private func respond(
        _ request: HTTPRequest, key: String, entry: CachedFile, expiresAt: Int64, granted: ContentDisposition.Kind,
        now: Int64
    ) throws -> HTTPResponse {
        let file = entry.file
        let local = caches.value
        let cacheControl = local.cacheControl(maxAge: max(0, expiresAt - now))
        if EntityTag.ifNoneMatch(request.headers["if-none-match"], matches: entry.etag) {
            var response = HTTPResponse(status: 304, headers: entry.validatorHeaders(cacheControl: cacheControl))
            response.staticHeaders = DownloadSafety.headers
            return response
        }
        // `download=1` (unsigned) can only turn an inline grant into an attachment.
        let attachment = granted == .attachment || (try? request.query.value(for: "download")) == "1"
        guard let blobPath = entry.localPath else {
            var headers = entry.validatorHeaders(cacheControl: cacheControl)
            switch try storage.download(
                key: file.storageKey, expiresAt: expiresAt, contentType: entry.servedType,
                contentDisposition: attachment ? entry.attachmentDisposition : entry.inlineDisposition)
            {
            case .redirect(let url):
                headers.add(name: "location", value: url)
                var response = HTTPResponse(status: 302, headers: headers)
                response.staticHeaders = DownloadSafety.headers
                return response
            case .localFile:
                throw APIError.internalError.with(message: "storage without a local path answered with a local file")
            }
        }
        // If-Range: a range only when the client's copy is still this one.
        let ifRange = request.headers["if-range"]
        let rangeHeader = ifRange == nil || ifRange == entry.etag ? request.headers["range"] : nil
        let decision = ByteRangeRequest.evaluate(rangeHeader: rangeHeader, size: file.size)
        if case .unsatisfiable = decision {
            var error = APIError.rangeNotSatisfiable
            error.headers["Content-Range"] = ByteRangeRequest.unsatisfiedContentRange(size: file.size)
            throw error
        }
        var headers = HTTPHeaders()
        headers.reserveCapacity(3)
        headers.appendLowercased(name: "cache-control", value: cacheControl)
        var response = HTTPResponse(status: 200, headers: headers)
        // ETag, Last-Modified, Accept-Ranges, Content-Type, Content-Disposition, CSP, CORP, nosniff: fixed per
        // file, in wire form since the file was cached.
        response.staticHeaders = attachment ? entry.attachmentHeaders : entry.inlineHeaders
        var range: ClosedRange<Int64>?
        if case .partial(let partial) = decision {
            range = partial
            response.status = 206
            response.headers.appendLowercased(
                name: "content-range",
                value: ByteRangeRequest.contentRange(partial, size: file.size))
        }
        if let bytes = local.smallBlobs.bytes(key: file.storageKey, path: blobPath, size: file.size) {
            response.body = range.map { Array(bytes[Int($0.lowerBound)...Int($0.upperBound)]) } ?? bytes
            return response
        }
        guard let handle = local.openBlobs.handle(key: file.storageKey, path: blobPath) else {
            invalidate(key)
            logger.warning(
                "blob missing for a file", ["object_key": .string(key), "storage_key": .string(file.storageKey)])
            throw APIError.fileNotFound
        }
        let offset = range?.lowerBound ?? 0
        let length = range.map { $0.upperBound - $0.lowerBound + 1 } ?? file.size
        response.file = ResponseFile(handle: handle, offset: offset, length: length)
        return response
    }

    private func cached(key: String, now: Int64) -> CachedFile? {
        guard let hit = caches.value.metadata.withLock({ $0[key] }), now - hit.loadedAt < Self.cacheSeconds else {
            return nil
        }
        return hit
    }

    private func metadata(key: String, now: Int64) async throws -> CachedFile? {
        if let hit = cached(key: key, now: now) { return hit }
        guard let file = try await repository.find(objectKey: key) else { return nil }
        let entry = CachedFile(file: file, localPath: storage.localPath(key: file.storageKey), loadedAt: now)
        let limit = cacheLimit
        // This loop's cache (the handler may have resumed elsewhere than it started; any loop's cache will do).
        caches.value.metadata.withLock { cache in
            // Bounded: past the limit start over (metadata reloads in one indexed query).
            if cache.count >= limit { cache.removeAll(keepingCapacity: true) }
            cache[key] = entry
        }
        return entry
    }

    /// A blob deleted from storage leaves every loop's memory too.
    func forgetBlob(storageKey: String) {
        caches.forEach { caches in
            caches.smallBlobs.remove(key: storageKey)
            caches.openBlobs.remove(key: storageKey)
        }
    }

    func invalidate(_ key: String) {
        caches.forEach { caches in _ = caches.metadata.withLock { $0.removeValue(forKey: key) } }
    }
}

/// Where uploaded bytes live. A blob is immutable and named by the server (`key`, e.g. `7/ab/<sha256>`); the
/// same content uploaded twice within an app is one blob. Uploads are spooled to a local file first (so the
/// hash and size are known before anything is stored), then handed to `store`.
public protocol BlobStorage: Sendable {
    /// A short name for logs and metrics: `local`, `s3`.
    var kind: String { get }

    /// Moves the finished spool file at `spoolPath` into storage as `key`. The spool file is consumed (moved or
    /// deleted) whether this succeeds or throws. Storing a key that already exists keeps one copy.
    func store(spoolPath: String, key: String, size: Int64, sha256Hex: String, contentType: String) async throws

    /// Removes the blob; a missing blob is not an error.
    func delete(key: String) async throws

    /// Whether the blob exists.
    func exists(key: String) async throws -> Bool

    /// Called once at start-up (e.g. creates the S3 bucket when missing); errors are logged, uploads then fail
    /// with 1308 until storage works.
    func prepare() async throws

    /// How `GET /files/{objectKey}` serves the blob: from a local path (sendfile), or by redirecting to a
    /// URL of the backend's own that expires at `expiresAt` (Unix seconds) and answers with these headers.
    func download(key: String, expiresAt: Int64, contentType: String, contentDisposition: String) throws -> BlobDownload

    /// The blob's path when it is a file on this machine (served with sendfile); nil for remote backends. Fixed
    /// for a key, so downloads compute it once per cached file.
    func localPath(key: String) -> String?
}

extension BlobStorage {
    public func prepare() async throws {}
    public func localPath(key: String) -> String? { nil }
}

public enum BlobDownload: Sendable, Equatable {
    case localFile(path: String)
    case redirect(url: String)
}

/// Settings of the file service (`PARLEY_FILES_*`, read by ParleyApp's Configuration).
public struct FilesConfiguration: Sendable {
    public enum Backend: Sendable {
        /// Blobs under `directory/blobs`, spooled in `directory/spool`.
        case local(directory: String)
        /// Blobs in an S3-compatible bucket (AWS S3, MinIO); uploads are spooled in `spoolDirectory` first and
        /// downloads redirect to presigned URLs.
        case s3(S3Configuration, spoolDirectory: String)
    }

    public var backend: Backend = .local(directory: ".parley/files")
    /// The largest upload the server takes (an app may set a lower limit): PARLEY_FILES_MAX_BYTES, 100 MiB.
    public var maxUploadBytes: Int64 = 100 << 20
    /// Bytes one user's uploads may hold (PARLEY_FILES_USER_QUOTA_BYTES, 1 GiB) and an app's distinct contents
    /// (PARLEY_FILES_APP_QUOTA_BYTES, none); 0: unlimited. Apps may override both.
    public var userQuotaBytes: Int64 = 1 << 30
    public var appQuotaBytes: Int64 = 0
    /// Uploads per minute per user, counted by each instance for itself (PARLEY_FILES_UPLOADS_PER_MINUTE; 0: none).
    public var uploadsPerMinute = 60
    /// Lifetime of signed URLs when the caller names none, and the most it may ask for (7 days).
    public var defaultURLTTLSeconds: Int = 3600
    /// The longest a signed URL may live (a URL is a bearer credential: it cannot be revoked before it expires).
    public var maxURLTTLSeconds: Int = 86400
    /// Unreferenced files older than this are swept (PARLEY_FILES_SWEEP_GRACE_SECONDS, 24 h).
    public var sweepGraceSeconds: Int = 86400
    /// How often the sweeper runs (PARLEY_FILES_SWEEP_INTERVAL_SECONDS, 10 min; 0 disables it).
    public var sweepIntervalSeconds: Int = 600
    /// The absolute origin that signed URLs start with, e.g. `https://im.example.com` (PARLEY_PUBLIC_URL);
    /// nil = `http://` + the request's Host header.
    public var publicBaseURL: String?
    /// How many files' metadata the download path keeps in memory.
    public var metadataCacheEntries: Int = 50_000

    public init() {}

    /// The spool directory (temp files of uploads in progress).
    public var spoolDirectory: String {
        switch backend {
        case .local(let directory): "\(directory)/spool"
        case .s3(_, let spool): spool
        }
    }
}

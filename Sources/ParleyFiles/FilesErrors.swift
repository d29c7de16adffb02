import ParleyHTTP

/// The file service's errors (1300-1399), documented in openapi.yaml and docs/ARCHITECTURE.md. 1303 (a file the
/// sender may not use) is retired: such a key answers 1302, as unknown as one never issued.
extension APIError {
    public static let fileTooLarge = APIError(code: 1300, status: 413, message: "file too large")
    public static let fileTypeNotAllowed = APIError(
        code: 1301, status: 415, message: "file type not allowed in this app")
    public static let fileNotFound = APIError(code: 1302, status: 404, message: "no such file")
    public static let fileURLExpired = APIError(code: 1304, status: 403, message: "signed URL expired")
    public static let fileURLInvalid = APIError(code: 1305, status: 403, message: "signed URL signature invalid")
    public static let malformedUpload = APIError(code: 1306, status: 400, message: "malformed upload")
    public static let invalidObjectKey = APIError(code: 1307, status: 400, message: "invalid object key")
    public static let fileStorageUnavailable = APIError(
        code: 1308, status: 503, message: "file storage unavailable, retry shortly")
    public static let avatarNotImage = APIError(
        code: 1310, status: 415, message: "an avatar must be a raster image (PNG, JPEG, GIF, WebP, HEIC, AVIF, ...)")
    public static let rangeNotSatisfiable = APIError(code: 1309, status: 416, message: "range not satisfiable")
    /// The uploader's files would pass PARLEY_FILES_USER_QUOTA_BYTES (or the app's override); nothing is kept.
    public static let userStorageQuotaExceeded = APIError(
        code: 1315, status: 413, message: "storage quota exceeded")
    /// The app's stored contents would pass PARLEY_FILES_APP_QUOTA_BYTES (or the app's override).
    public static let appStorageQuotaExceeded = APIError(
        code: 1316, status: 413, message: "the app's storage quota is used up")
    /// The uploader is over PARLEY_FILES_UPLOADS_PER_MINUTE.
    public static func uploadRateLimited(retryAfterSeconds: Int) -> APIError {
        APIError(
            code: 1317, status: 429, message: "too many uploads, try again later",
            headers: ["Retry-After": String(max(1, retryAfterSeconds))])
    }
}

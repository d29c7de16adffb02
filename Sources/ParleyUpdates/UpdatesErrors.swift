import ParleyHTTP

/// Releases and update-check errors (1400-1449; push has 1450-1499). Input that fails validation answers 1002
/// naming the field; these codes say what is wrong with a well-formed request.
extension APIError {
    /// No release with this id in the calling app (another app's releases are never visible).
    public static let releaseNotFound = APIError(code: 1400, status: 404, message: "no such release")
    /// A publish must be above every versionCode published for the platform and channel, withdrawn ones included.
    public static let versionCodeNotIncreasing = APIError(
        code: 1401, status: 409,
        message: "versionCode must increase per platform and channel")
    /// Withdrawn releases are history: they cannot be changed.
    public static let releaseWithdrawn = APIError(code: 1402, status: 409, message: "the release was withdrawn")
}

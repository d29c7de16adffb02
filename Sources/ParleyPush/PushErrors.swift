import ParleyHTTP

/// Push's errors (1450-1499; 1400-1449 belong to updates), documented in openapi.yaml and docs/ARCHITECTURE.md.
extension APIError {
    public static let pushTokenNotFound = APIError(
        code: 1450, status: 404,
        message: "no such push token (unknown, or bound to another user)")
    public static let pushUserMismatch = APIError(
        code: 1451, status: 403,
        message: "uid is not the signed-in user")
}

import ParleyHTTP

/// Push's errors (1450-1499; 1400-1449 belong to updates), documented in openapi.yaml and docs/ARCHITECTURE.md.
/// 1451 (the legacy route's `uid` was not the caller) is retired: that `uid` is the app's own id, accepted as sent.
extension APIError {
    public static let pushTokenNotFound = APIError(
        code: 1450, status: 404,
        message: "no such push token (unknown, or bound to another user)")
    /// Knowing a token is not owning it: a token bound to another user's signed-in device moves only from that
    /// device (the same `deviceId`), or once that session has ended (logout unbinds it).
    public static let pushTokenHeld = APIError(
        code: 1452, status: 409,
        message: "this push token is bound to another user's signed-in device")
}

import ParleyHTTP

/// Presence errors (1510-1514).
extension APIError {
    /// A `presence_subscribe` past the number of users one user's connections may watch together.
    public static let presenceSubscriptionLimit = APIError(
        code: 1510, status: 400, message: "too many presence subscriptions")
    /// A `presence_set` with a status other than `online` or `away`.
    public static let invalidPresenceStatus = APIError(
        code: 1511, status: 400, message: "`data.status` must be `online` or `away`")
}

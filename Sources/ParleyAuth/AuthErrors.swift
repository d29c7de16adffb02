import ParleyHTTP

/// Auth and tenancy errors (1030-1069). Token failures carry `WWW-Authenticate` (RFC 6750 §3) so generic
/// HTTP clients know to re-authenticate; the code tells a Parley client what to do: 1031 refresh, 1030 / 1034 /
/// 1037 log in again, 1033 ask the user to accept the privacy policy.
extension APIError {
    private static let bearerChallenge = ["WWW-Authenticate": #"Bearer realm="parley", error="invalid_token""#]

    /// No token, or one that is malformed, wrongly signed, signed with an unknown key, or `alg: none`.
    public static let tokenInvalid = APIError(
        code: 1030, status: 401, message: "invalid token", headers: bearerChallenge)
    public static let tokenMissing = APIError(
        code: 1030, status: 401, message: "missing bearer token",
        headers: ["WWW-Authenticate": #"Bearer realm="parley""#])
    /// A genuine token past its `exp`: refresh it.
    public static let tokenExpired = APIError(
        code: 1031, status: 401, message: "token expired, refresh it",
        headers: bearerChallenge)
    /// A genuine token of another audience (an IM token on REST, an access token on the WebSocket).
    public static let tokenWrongAudience = APIError(
        code: 1032, status: 401, message: "token audience not accepted here",
        headers: bearerChallenge)
    public static let consentRequired = APIError(
        code: 1033, status: 403,
        message: "privacy policy updated, consent required")
    /// The token's session was ended (logout, revoked, displaced by another login, refresh-token reuse).
    public static let sessionEnded = APIError(
        code: 1034, status: 401, message: "session ended, log in again",
        headers: bearerChallenge)
    /// Same text whether or not the account exists.
    public static let invalidCredentials = APIError(code: 1035, status: 401, message: "invalid username or password")
    /// Failed logins from this source (address, or the device) slow further attempts down; the owner's own
    /// devices are throttled on their own failures only.
    public static func loginThrottled(retryAfterSeconds: Int) -> APIError {
        APIError(
            code: 1036, status: 429, message: "too many failed logins, try again later",
            headers: ["Retry-After": String(max(1, retryAfterSeconds))])
    }
    /// Registrations from this client address (IPv6 by /64) reached PARLEY_AUTH_REGISTRATIONS_PER_HOUR.
    public static func registrationsThrottled(retryAfterSeconds: Int) -> APIError {
        APIError(
            code: 1044, status: 429, message: "too many registrations from this address, try again later",
            headers: ["Retry-After": String(max(1, retryAfterSeconds))])
    }
    public static let refreshTokenInvalid = APIError(
        code: 1037, status: 401,
        message: "refresh token invalid, expired or already used")
    public static let signatureInvalid = APIError(code: 1038, status: 401, message: "request signature does not match")
    public static let signatureStale = APIError(
        code: 1038, status: 401,
        message: "X-Timestamp is more than 300 seconds away from the server's clock")
    public static let signatureReplayed = APIError(code: 1038, status: 401, message: "X-Nonce was already used")
    public static let unknownAppKey = APIError(code: 1039, status: 401, message: "unknown app key")
    public static let usernameTaken = APIError(code: 1040, status: 409, message: "username already taken")
    public static let forbidden = APIError(code: 1041, status: 403, message: "forbidden")
    /// A signed login named a user who signs in with a password: the app's backend may speak for its own users,
    /// not take over accounts that have a password.
    public static let accountBanned = APIError(
        code: 1043, status: 403, message: "this account is banned")
    /// `DELETE /api/users/me` by an account the app's backend created (signed login): its backend deletes it.
    public static let accountManagedByApp = APIError(
        code: 1047, status: 403, message: "delete this account through the app's backend")
    /// Password and signed logins of a deleted account, and signed logins that would re-create it.
    public static let accountDeleted = APIError(code: 1048, status: 403, message: "this account was deleted")
    /// A user id the server keeps for itself (`system`: the sender of system messages).
    public static let userIdReserved = APIError(
        code: 1049, status: 400, message: "this user id is reserved for the server")
    /// Admin routes: no such user in the signing app (another app's users are not found either).
    public static let adminUserNotFound = APIError(code: 1050, status: 404, message: "no such user in this app")
    /// `POST /api/admin/users/{userId}/logout` with a `sessionId` that is not an open session of the user.
    public static let adminSessionNotFound = APIError(
        code: 1051, status: 404, message: "no such open session of this user")
    public static let passwordAccount = APIError(
        code: 1042, status: 409, message: "this user id belongs to an account that logs in with a password")
    /// Password hashing is saturated: answer quickly instead of queueing logins without bound.
    public static let authBusy = APIError(
        code: 1503, status: 503, message: "too many logins in progress, retry shortly",
        headers: ["Retry-After": "1"])
}

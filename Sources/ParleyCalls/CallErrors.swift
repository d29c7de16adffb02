import ParleyHTTP

/// Call errors (1700-1719). Malformed input answers 1002 naming the field; these say what cannot be done with a
/// well-formed request.
extension APIError {
    /// Unknown, or a call the caller is not in: the same answer, so a call id tells outsiders nothing.
    public static let callNotFound = APIError(code: 1700, status: 404, message: "no such call")
    public static let callEnded = APIError(code: 1701, status: 409, message: "the call has ended")
    /// Rejected, timed out or cancelled for this user (or past its deadline).
    public static let callNotRinging = APIError(code: 1702, status: 409, message: "the call no longer rings for you")
    /// An accept or reject of a call this user already answered (on this or another device), or a cancel after an
    /// answer (hang up instead).
    public static let callAlreadyAnswered = APIError(code: 1703, status: 409, message: "the call was already answered")
    public static let callCancelNotAllowed = APIError(
        code: 1704, status: 403, message: "only the caller may cancel a call")
    public static let tooManyCallParticipants = APIError(
        code: 1705, status: 400,
        message: "a call has at most \(CallConfiguration.maxParticipants) participants, the caller included")
    public static let callUserDataTooLarge = APIError(
        code: 1706, status: 413, message: "`userData` is larger than \(CallConfiguration.maxUserDataBytes) bytes")
    /// PARLEY_TURN_SECRET or PARLEY_TURN_URIS is not set.
    public static let turnNotConfigured = APIError(
        code: 1707, status: 404, message: "this server issues no TURN credentials")
    /// An accept or an invite by a user who is already in another call (on any device): one call at a time.
    public static let alreadyInCall = APIError(
        code: 1708, status: 409, message: "you are in another call; hang it up first")
}

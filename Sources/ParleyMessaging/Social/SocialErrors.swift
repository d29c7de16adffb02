import ParleyHTTP

/// Errors of the social graph (friends, requests, blocks), in the messaging range. A user another user blocked
/// learns only that they were refused (`peerRefused`), never more.
extension APIError {
    /// The recipient blocked the caller: 1:1 messages, friend requests and call invites to them are refused.
    public static let peerRefused = APIError(code: 1119, status: 403, message: "refused")
    /// The app lets only friends chat 1:1 (`parley app update --direct-messages friends`).
    public static let friendsOnly = APIError(
        code: 1120, status: 403, message: "this app lets only friends chat one to one; send a friend request first")
    public static let friendRequestPending = APIError(
        code: 1121, status: 409, message: "a friend request to this user is already pending")
    public static let alreadyFriends = APIError(code: 1122, status: 409, message: "you are already friends")
    /// An unknown id, or a request that is not the caller's to act on.
    public static let friendRequestNotFound = APIError(code: 1123, status: 404, message: "no such friend request")
    public static let friendRequestHandled = APIError(
        code: 1124, status: 409, message: "the friend request was already accepted, rejected or withdrawn")
    public static let youBlockedUser = APIError(
        code: 1125, status: 409, message: "you blocked this user: unblock them first")
    /// PARLEY_IM_MAX_FRIENDS, on the caller's side or the other's.
    public static let friendLimitReached = APIError(
        code: 1126, status: 409, message: "the friend list is full")
    public static let notFriend = APIError(code: 1127, status: 404, message: "not a friend")
    /// PARLEY_IM_MAX_BLOCKS.
    public static let blockLimitReached = APIError(code: 1128, status: 409, message: "the block list is full")
}

/// The events of a user's social graph. Each is a WebSocket frame of that type, and a sync change of that type whose
/// fields are the frame's data (docs/protocol.md lists their data).
public enum UserEventKind: String, Sendable, CaseIterable {
    /// A request arrived (to the recipient) or was sent (to the sender's other devices).
    case friendRequest = "friend_request"
    case friendRequestRejected = "friend_request_rejected"
    case friendRequestWithdrawn = "friend_request_withdrawn"
    case friendAdded = "friend_added"
    case friendRemoved = "friend_removed"
    /// The owner changed a friend's remark (to the owner's other devices).
    case friendUpdated = "friend_updated"
    /// The caller blocked or unblocked someone (to the caller's other devices only: the blocked user is not told).
    case block
    case unblock
    /// A user's public profile changed (to their friends and 1:1 peers, and their own other devices).
    case profile
}

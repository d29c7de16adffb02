/// Events that belong to users rather than to a conversation. Each is a WebSocket frame of that type; the social
/// graph's are also sync changes of that type whose fields are the frame's data (docs/protocol.md lists their data).
/// Call signalling's (`call_*`, ParleyCalls) are live only: a ringing call is read back with `GET /api/calls`, and a
/// replayed invitation must never ring a call that is over.
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
    /// A join request to a group with the `approval` policy (to its owner and admins, and the requester's other
    /// devices).
    case groupJoinRequest = "group_join_request"
    /// An owner or admin accepted or rejected a join request (to the requester, and to the owner and admins).
    case groupJoinRequestHandled = "group_join_request_handled"
    /// The user deleted a message for themselves (to their other devices).
    case messageDeleted = "message_deleted"
    /// New read counts of a sender's group messages (`ReadReceipts`): live only, never recorded in `changes` (the
    /// counts are read back with `GET /api/im/messages/{id}/reads`).
    case readReceipts = "read_receipts"
    /// Call signalling (ParleyCalls): never recorded in `changes`.
    case callInvited = "call_invited"
    case callAccepted = "call_accepted"
    case callRejected = "call_rejected"
    case callCancelled = "call_cancelled"
    case callTimeout = "call_timeout"
    case callEnded = "call_ended"
    case callParticipantJoined = "call_participant_joined"
    case callParticipantLeft = "call_participant_left"
    case callAnsweredElsewhere = "call_answered_elsewhere"
}

import Foundation
import ParleyHTTP
import ParleyJSON

/// Messaging errors (1100-1199). Input that fails validation answers 1002 naming the field; these codes say
/// what the client can do about a well-formed request that cannot be carried out.
extension APIError {
    /// The caller is not (or no longer) a member of the group (group routes and group sends). Conversation routes
    /// answer `conversationNotFound` instead, so that a conversation's existence is not told to outsiders.
    public static let notMember = APIError(code: 1100, status: 403, message: "not a member of this conversation")
    public static let conversationNotFound = APIError(code: 1101, status: 404, message: "no such conversation")
    public static let messageNotFound = APIError(code: 1102, status: 404, message: "no such message")
    public static let userNotFound = APIError(code: 1103, status: 404, message: "no such user")
    public static let groupNotFound = APIError(code: 1104, status: 404, message: "no such group")
    /// Only the sender (within the window) and a group's owner and admins may revoke.
    public static let revokeNotAllowed = APIError(code: 1105, status: 403, message: "you may not revoke this message")
    public static let revokeWindowPassed = APIError(
        code: 1106, status: 403, message: "the time to revoke this message has passed")
    public static let editNotAllowed = APIError(code: 1107, status: 403, message: "you may not edit this message")
    public static let editWindowPassed = APIError(
        code: 1108, status: 403, message: "the time to edit this message has passed")
    public static let blockedInGroup = APIError(
        code: 1109, status: 403, message: "you are blocked from posting in this group")
    public static let groupDissolved = APIError(code: 1110, status: 403, message: "the group was dissolved")
    public static let groupFull = APIError(code: 1111, status: 409, message: "the group has reached its member limit")
    /// The caller's role in the group does not allow the operation.
    public static let groupPermissionDenied = APIError(
        code: 1112, status: 403, message: "your role in this group does not allow this")
    public static let ownerMustTransfer = APIError(
        code: 1113, status: 409,
        message: "the owner must transfer ownership or dissolve the group")
    public static let invalidCursor = APIError(code: 1114, status: 400, message: "invalid sync cursor")
    public static let messageRevoked = APIError(code: 1115, status: 409, message: "the message was revoked")
    /// The changes after this cursor were partly pruned (PARLEY_IM_SYNC_RETENTION_DAYS).
    public static let cursorExpired = APIError(
        code: 1116, status: 410,
        message: "sync cursor too old: reload conversations and history, then sync without a cursor")
    /// The sender is over PARLEY_IM_SEND_RATE_PER_SECOND (and its burst); over the WebSocket the error frame carries
    /// `retryAfter` instead of the header.
    public static func sendRateLimited(retryAfterSeconds: Int) -> APIError {
        APIError(
            code: 1118, status: 429, message: "sending too fast, slow down",
            headers: ["Retry-After": String(max(1, retryAfterSeconds))])
    }
    /// Removing yourself is leaving, which has its own route (and rules: an owner must transfer first).
    public static let cannotRemoveSelf = APIError(
        code: 1117, status: 403,
        message: "you cannot remove yourself: leave the group with POST /api/im/groups/{id}/leave")

    // The admin API and group mutes (issue 20).
    /// An admin group create named a group id that is taken.
    public static let groupIdTaken = APIError(code: 1129, status: 409, message: "a group with this id already exists")
    /// The sender is muted in the group until `until`.
    public static func mutedInGroup(until: Date) -> APIError {
        APIError(
            code: 1130, status: 403,
            message: "you are muted in this group until \(ISO8601.format(until))")
    }
    /// The group is muted: only its owner and admins may post.
    public static let groupMutedAll = APIError(
        code: 1131, status: 403, message: "the group is muted: only its owner and admins may post")
    /// An online-only message travels inline between instances (PostgreSQL NOTIFY), which bounds its size.
    public static let onlineOnlyTooLarge = APIError(
        code: 1132, status: 413, message: "an online-only message must be smaller: it is relayed inline")
    public static let broadcastJobNotFound = APIError(code: 1133, status: 404, message: "no such broadcast job")
    /// The group's join policy is `invite_only`: only its owner and admins add members.
    public static let groupInviteOnly = APIError(
        code: 1137, status: 403, message: "this group takes members by invitation only")
    public static let alreadyGroupMember = APIError(code: 1138, status: 409, message: "already a member of this group")
    public static let joinRequestNotFound = APIError(
        code: 1139, status: 404, message: "no such join request of this group")
    public static let joinRequestHandled = APIError(
        code: 1140, status: 409, message: "the join request was already accepted or rejected")
    /// A message holds at most `MessageInteractions.maxEmojisPerMessage` different reactions, and a user puts at most
    /// `maxReactionsPerUser` on one message.
    public static let reactionLimitReached = APIError(
        code: 1141, status: 409, message: "this message has reached its reaction limit")
    /// A conversation holds at most `MessageInteractions.maxPins` pinned messages.
    public static let pinLimitReached = APIError(
        code: 1142, status: 409, message: "this conversation has reached its limit of pinned messages")
    /// Only a group's owner and admins mention everybody (`mentions.all`).
    public static let mentionAllNotAllowed = APIError(
        code: 1143, status: 403, message: "only the group's owner and admins may mention everybody")
    /// `replyTo` names no message of this conversation that the sender can see.
    public static let replyTargetNotFound = APIError(
        code: 1144, status: 404, message: "`replyTo` names no message of this conversation that you can see")
    /// Read receipts are counted for groups of at most `ReadReceiptRepository.maxGroupMembers` members.
    public static let readReceiptsGroupTooLarge = APIError(
        code: 1145, status: 409, message: "read receipts are kept for groups of at most 200 members")
}

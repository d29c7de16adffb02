import ParleyAuth
import ParleyHTTP

/// Reports of users, messages and groups to the app's operators. A user may report what they can see: any user or
/// group of the app, and a message of a conversation they are in (1102 otherwise, as for an unknown id). A message
/// report keeps the message as it was, so a later revoke does not remove the evidence.
public struct ReportService: Sendable {
    let reports: ReportRepository
    let messages: MessageService
    let groups: GroupRepository

    static let maxReasonCharacters = 64
    static let maxNoteCharacters = 1000

    /// The stored report and whether this call created it (a second report of the same target by the same user
    /// returns the first, unchanged).
    public func report(
        targetType rawType: String, targetId rawId: String, reason rawReason: String, note rawNote: String?,
        by principal: Principal
    ) async throws -> (report: Report, created: Bool) {
        guard let targetType = ReportTargetType(rawValue: rawType) else {
            throw APIError.validationFailed.with(message: "`targetType` must be user, message or group")
        }
        let reason = try MessagingInput.name(rawReason, field: "reason", maxCharacters: Self.maxReasonCharacters)
        let note = try rawNote.map { raw throws(APIError) in
            try MessagingInput.text(raw, field: "note", maxCharacters: Self.maxNoteCharacters)
        }
        var snapshot: [UInt8]?
        let targetId: String
        switch targetType {
        case .user:
            targetId = try MessagingInput.userID(rawId, field: "targetId")
            guard targetId != principal.userId else {
                throw APIError.validationFailed.with(message: "users cannot report themselves")
            }
            guard try await reports.userExists(appId: principal.appId, userId: targetId) else {
                throw APIError.userNotFound
            }
        case .message:
            // Any id that names no message the caller can read is as unknown as one never issued.
            guard let id = try? MessagingInput.messageID(rawId) else { throw APIError.messageNotFound }
            targetId = String(id)
            snapshot = try await messages.message(id, for: principal).jsonBytes()
        case .group:
            targetId = try MessagingInput.groupID(rawId, field: "targetId")
            guard try await groups.find(appId: principal.appId, groupId: targetId) != nil else {
                throw APIError.groupNotFound
            }
        }
        return try await reports.insert(
            appId: principal.appId, reporterId: principal.userId, targetType: targetType, targetId: targetId,
            reason: reason, note: note, messageSnapshot: snapshot)
    }
}

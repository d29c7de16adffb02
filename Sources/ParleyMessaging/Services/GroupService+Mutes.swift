import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON

/// Group mutes: a member muted until a time, and mute all (only the owner and admins post). The send verdict reads
/// both under the conversation's lock (migrations/0024); each change writes a notify message so clients learn of it.
extension GroupService {
    /// Mutes `userId` until `until` (nil or a past time: unmutes). Owners and admins over members they outrank.
    public func muteMember(_ groupId: String, userId rawID: String, until: Date?, by principal: Principal)
        async throws -> GroupInfo
    {
        try await muteMember(groupId, userId: rawID, until: until, by: principal, requiring: .manager)
    }

    func muteMember(
        _ groupId: String, userId rawID: String, until: Date?, by principal: Principal, requiring: Requirement
    ) async throws -> GroupInfo {
        let userId = try MessagingInput.userID(rawID, field: "userId")
        return try await change(groupId, by: principal, requiring: requiring) { connection, _, operatorMember in
            let target = try await member(userId, of: groupId, on: connection, appId: principal.appId)
            guard Self.outranks(operatorMember.role, target.role) else { throw APIError.groupPermissionDenied }
            try await groups.setMutedUntil(
                on: connection, appId: principal.appId, groupId: groupId, userId: userId, until: until)
            var fields: [(String, JSONValue)] = [("userId", .string(userId))]
            if let until { fields.append(("until", .number(JSONNumber(ISO8601.epochMilliseconds(until))))) }
            return [
                try await notify(
                    on: connection, principal: principal, groupId: groupId,
                    event: until == nil ? "member_unmuted" : "member_muted", fields: fields)
            ]
        }
    }

    /// Mutes or unmutes the whole group: owners and admins.
    public func muteAll(_ groupId: String, muted: Bool, by principal: Principal) async throws -> GroupInfo {
        try await muteAll(groupId, muted: muted, by: principal, requiring: .manager)
    }

    func muteAll(_ groupId: String, muted: Bool, by principal: Principal, requiring: Requirement) async throws
        -> GroupInfo
    {
        try await change(groupId, by: principal, requiring: requiring) { connection, group, _ in
            guard group.mutedAll != muted else { return [] }
            try await groups.setMutedAll(on: connection, appId: principal.appId, groupId: groupId, muted: muted)
            return [
                try await notify(
                    on: connection, principal: principal, groupId: groupId,
                    event: muted ? "group_muted" : "group_unmuted", fields: [])
            ]
        }
    }
}

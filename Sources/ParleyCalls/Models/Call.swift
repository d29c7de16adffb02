import Foundation
import ParleyJSON

public enum CallMediaType: String, Sendable, Codable, CaseIterable {
    case audio, video
}

/// A call as a whole: ringing until the first accept, active until nobody is left in it, then ended.
public enum CallState: String, Sendable, Codable {
    case ringing, active, ended
}

/// One participant's part: the caller starts `accepted`; a callee rings until they accept, reject (or answer busy
/// by themselves), the caller cancels, or the timeout passes; whoever was in the call has `left` once it ends.
public enum ParticipantState: String, Sendable, Codable {
    case ringing, accepted, rejected, busy, left, timeout, cancelled
}

/// Why a call ended: the kind of the transition that ended it.
public enum CallEndReason: String, Sendable, Codable {
    case hangup, cancelled, rejected, busy, timeout
}

public struct CallParticipant: Sendable, Equatable, Codable {
    public var userId: String
    public var state: ParticipantState
    /// The device (session) that answered; not in the JSON (another user has no business with it).
    public var acceptedSessionId: String?
    public var joinedAt: Date?
    public var leftAt: Date?

    public init(
        userId: String, state: ParticipantState, acceptedSessionId: String? = nil, joinedAt: Date? = nil,
        leftAt: Date? = nil
    ) {
        self.userId = userId
        self.state = state
        self.acceptedSessionId = acceptedSessionId
        self.joinedAt = joinedAt
        self.leftAt = leftAt
    }

    enum CodingKeys: String, CodingKey {
        case userId, state, joinedAt, leftAt
    }
}

public struct Call: Sendable, Equatable {
    public var id: String
    public var appId: Int64
    public var callerId: String
    public var mediaType: CallMediaType
    public var userData: String
    public var state: CallState
    public var timeoutSeconds: Int
    /// When the callees still ringing time out; nil once nobody rings.
    public var timeoutAt: Date?
    public var createdAt: Date
    public var startedAt: Date?
    public var endedAt: Date?
    public var endReason: CallEndReason?
    public var endedBy: String?
    /// The caller first, then the callees in the order invited.
    public var participants: [CallParticipant]

    public var calleeIds: [String] { participants.filter { $0.userId != callerId }.map(\.userId) }

    func participant(_ userId: String) -> CallParticipant? { participants.first { $0.userId == userId } }

    /// Whole seconds from the first accept to the end (0 for a call nobody answered).
    public var durationSeconds: Int {
        guard let startedAt, let endedAt else { return 0 }
        return max(0, Int(endedAt.timeIntervalSince(startedAt).rounded()))
    }
}

/// The JSON of a call (`GET /api/calls/{id}` and every call frame's ack).
public struct CallView: Sendable, Encodable {
    public var callId: String
    public var callerId: String
    public var mediaType: CallMediaType
    public var userData: String
    public var state: CallState
    public var timeoutSeconds: Int
    public var createdAt: Date
    public var startedAt: Date?
    public var endedAt: Date?
    public var endReason: CallEndReason?
    public var endedBy: String?
    public var durationSeconds: Int
    public var participants: [CallParticipant]

    public init(_ call: Call) {
        callId = call.id
        callerId = call.callerId
        mediaType = call.mediaType
        userData = call.userData
        state = call.state
        timeoutSeconds = call.timeoutSeconds
        createdAt = call.createdAt
        startedAt = call.startedAt
        endedAt = call.endedAt
        endReason = call.endReason
        endedBy = call.endedBy
        durationSeconds = call.durationSeconds
        participants = call.participants
    }
}

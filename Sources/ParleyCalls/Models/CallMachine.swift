import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyMessaging

/// The rules of a call, pure: each function takes the call as locked in the database and the time, and returns the
/// call to store and the events to publish after the commit, or throws the refusal. No I/O and no clock of its own,
/// so every transition is tested without a socket or a database (CallMachineTests).
///
/// A call is over once nobody is in it or fewer than two could still be (in it or ringing); then everyone still in it
/// has left, whoever still rings is cancelled, and every participant gets `call_ended`.
enum CallMachine {
    struct Outcome: Sendable {
        var call: Call
        /// In publish order; each goes to its recipients' every device but the one that asked (it has the answer).
        var events: [UserEvent]
    }

    struct Callee: Sendable, Equatable {
        var userId: String
        /// Already in another call that has not ended: answers busy by itself.
        var busy: Bool
        /// What a 1:1 message from the caller would be refused with (`parley_direct_verdict`), if anything.
        var refusal: DirectRefusal? = nil
    }

    /// The verdicts of a 1:1 send that also refuse a call invite.
    enum DirectRefusal: Sendable, Equatable {
        /// The callee blocked the caller.
        case blocked
        /// The app lets only friends chat 1:1 and they are not friends.
        case notFriends

        var error: APIError { self == .blocked ? .peerRefused : .friendsOnly }
    }

    /// A 1:1 invite the direct verdict refuses is refused with the send's code (nothing is stored). In a multi-party
    /// call such a callee answers busy, as if in another call: the caller learns no more than from a refused send,
    /// and the others still ring. A caller already in another call is refused (`alreadyInCall`).
    static func invite(
        id: String, appId: Int64, callerId: String, callerBusy: Bool = false, callees: [Callee],
        mediaType: CallMediaType, userData: String, timeoutSeconds: Int, now: Date
    ) throws(APIError) -> Outcome {
        if callerBusy { throw APIError.alreadyInCall }
        if callees.count == 1, let refusal = callees[0].refusal { throw refusal.error }
        let callees = callees.map { Callee(userId: $0.userId, busy: $0.busy || $0.refusal != nil) }
        var participants = [CallParticipant(userId: callerId, state: .accepted, joinedAt: now)]
        for callee in callees {
            participants.append(
                CallParticipant(
                    userId: callee.userId, state: callee.busy ? .busy : .ringing, leftAt: callee.busy ? now : nil))
        }
        let ringing = callees.filter { !$0.busy }.map(\.userId)
        var call = Call(
            id: id, appId: appId, callerId: callerId, mediaType: mediaType, userData: userData, state: .ringing,
            timeoutSeconds: timeoutSeconds,
            timeoutAt: ringing.isEmpty ? nil : now.addingTimeInterval(Double(timeoutSeconds)),
            createdAt: now, participants: participants)
        var events: [UserEvent] = []
        if !ringing.isEmpty {
            events.append(
                UserEvent(
                    kind: .callInvited,
                    data: .object(
                        JSONObject([
                            ("callId", .string(id)), ("callerId", .string(callerId)),
                            ("mediaType", .string(mediaType.rawValue)), ("userData", .string(userData)),
                            ("participantIds", .array(callees.map { .string($0.userId) })),
                            ("timeoutSeconds", .number(JSONNumber(timeoutSeconds))),
                            ("createdAt", .string(ISO8601.format(now))),
                        ])),
                    recipients: ringing))
        }
        for callee in callees where callee.busy {
            events.append(rejected(call, userId: callee.userId, reason: "busy", to: [callerId]))
        }
        finishIfOver(&call, reason: allCalleesBusy(call) ? .busy : .rejected, by: nil, now: now, events: &events)
        return Outcome(call: call, events: events)
    }

    /// The first accept starts the call (`call_accepted`); a later one joins it (`call_participant_joined`). The
    /// accepting user's other devices stop ringing (`call_answered_elsewhere`). A user is in one call at a time:
    /// `inAnotherCall` (read under the user's lock) refuses the accept.
    static func accept(
        _ call: Call, userId: String, sessionId: String, inAnotherCall: Bool = false, now: Date
    ) throws(APIError) -> Outcome {
        var call = call
        let index = try ringingParticipant(call, userId: userId, now: now)
        if inAnotherCall { throw APIError.alreadyInCall }
        call.participants[index].state = .accepted
        call.participants[index].acceptedSessionId = sessionId
        call.participants[index].joinedAt = now
        let kind: UserEventKind
        if call.state == .ringing {
            call.state = .active
            call.startedAt = now
            kind = .callAccepted
        } else {
            kind = .callParticipantJoined
        }
        stopTimeoutIfNobodyRings(&call)
        let others = everyone(call).filter { $0 != userId }
        let events = [
            UserEvent(kind: kind, data: subject(call, userId), recipients: others),
            UserEvent(kind: .callAnsweredElsewhere, data: callOnly(call), recipients: [userId]),
        ]
        return Outcome(call: call, events: events)
    }

    static func reject(_ call: Call, userId: String, now: Date) throws(APIError) -> Outcome {
        var call = call
        let index = try ringingParticipant(call, userId: userId, now: now)
        call.participants[index].state = .rejected
        call.participants[index].leftAt = now
        stopTimeoutIfNobodyRings(&call)
        var events = [rejected(call, userId: userId, reason: "rejected", to: everyone(call))]
        finishIfOver(&call, reason: .rejected, by: userId, now: now, events: &events)
        return Outcome(call: call, events: events)
    }

    /// The caller withdraws the invitation before anyone answered.
    static func cancel(_ call: Call, userId: String, now: Date) throws(APIError) -> Outcome {
        var call = call
        guard call.state != .ended else { throw APIError.callEnded }
        guard call.participant(userId) != nil else { throw APIError.callNotFound }
        guard userId == call.callerId else { throw APIError.callCancelNotAllowed }
        guard call.state == .ringing else { throw APIError.callAlreadyAnswered }
        for index in call.participants.indices where call.participants[index].state == .ringing {
            call.participants[index].state = .cancelled
            call.participants[index].leftAt = now
        }
        call.timeoutAt = nil
        var events = [UserEvent(kind: .callCancelled, data: callOnly(call), recipients: everyone(call))]
        finishIfOver(&call, reason: .cancelled, by: userId, now: now, events: &events)
        return Outcome(call: call, events: events)
    }

    /// "I am out", whatever the state, as a phone's end button means it: a ringing callee rejects, the caller of a call
    /// nobody answered yet cancels, someone in the call leaves it.
    static func hangup(_ call: Call, userId: String, now: Date) throws(APIError) -> Outcome {
        guard call.state != .ended else { throw APIError.callEnded }
        guard let participant = call.participant(userId) else { throw APIError.callNotFound }
        switch participant.state {
        case .ringing:
            return try reject(call, userId: userId, now: now)
        case .accepted where userId == call.callerId && call.state == .ringing:
            return try cancel(call, userId: userId, now: now)
        case .accepted:
            var call = call
            let index = call.participants.firstIndex { $0.userId == userId }!
            call.participants[index].state = .left
            call.participants[index].leftAt = now
            var events: [UserEvent] = []
            if !finishIfOver(&call, reason: .hangup, by: userId, now: now, events: &events) {
                events.append(
                    UserEvent(kind: .callParticipantLeft, data: subject(call, userId), recipients: everyone(call)))
            }
            return Outcome(call: call, events: events)
        case .rejected, .busy, .left, .timeout, .cancelled:
            throw APIError.callNotRinging.with(message: "you are no longer in this call")
        }
    }

    /// The callees still ringing at the deadline time out (`call_timeout`); nil when nothing is due.
    static func expire(_ call: Call, now: Date) -> Outcome? {
        guard call.state != .ended, let deadline = call.timeoutAt, now >= deadline else { return nil }
        var call = call
        var timedOut: [String] = []
        for index in call.participants.indices where call.participants[index].state == .ringing {
            call.participants[index].state = .timeout
            call.participants[index].leftAt = now
            timedOut.append(call.participants[index].userId)
        }
        call.timeoutAt = nil
        var events: [UserEvent] = []
        if !timedOut.isEmpty {
            events.append(
                UserEvent(
                    kind: .callTimeout,
                    data: .object(
                        JSONObject([
                            ("callId", .string(call.id)), ("userIds", .array(timedOut.map { .string($0) })),
                        ])),
                    recipients: everyone(call)))
        }
        finishIfOver(&call, reason: .timeout, by: nil, now: now, events: &events)
        return Outcome(call: call, events: events)
    }

    // MARK: Helpers

    /// The index of `userId`'s participant row, which must be ringing and not past the deadline.
    private static func ringingParticipant(_ call: Call, userId: String, now: Date) throws(APIError) -> Int {
        guard call.state != .ended else { throw APIError.callEnded }
        guard let index = call.participants.firstIndex(where: { $0.userId == userId }) else {
            throw APIError.callNotFound
        }
        let participant = call.participants[index]
        guard participant.state == .ringing else {
            throw participant.state == .accepted ? APIError.callAlreadyAnswered : APIError.callNotRinging
        }
        // Past the deadline the sweep times it out any moment: the answer must not depend on which ran first.
        if let deadline = call.timeoutAt, now >= deadline { throw APIError.callNotRinging }
        return index
    }

    /// Ends the call when nobody is in it or fewer than two could still be; returns whether it did.
    @discardableResult
    private static func finishIfOver(
        _ call: inout Call, reason: CallEndReason, by userId: String?, now: Date, events: inout [UserEvent]
    ) -> Bool {
        guard call.state != .ended else { return true }
        let accepted = call.participants.count { $0.state == .accepted }
        let ringing = call.participants.count { $0.state == .ringing }
        guard accepted == 0 || accepted + ringing < 2 else { return false }
        for index in call.participants.indices {
            switch call.participants[index].state {
            case .accepted:
                call.participants[index].state = .left
                call.participants[index].leftAt = now
            case .ringing:
                call.participants[index].state = .cancelled
                call.participants[index].leftAt = now
            case .rejected, .busy, .left, .timeout, .cancelled:
                break
            }
        }
        call.state = .ended
        call.endedAt = now
        call.timeoutAt = nil
        call.endReason = reason
        call.endedBy = userId
        var fields: [(String, JSONValue)] = [
            ("callId", .string(call.id)), ("mediaType", .string(call.mediaType.rawValue)),
            ("reason", .string(reason.rawValue)),
        ]
        fields.append(("userId", userId.map { .string($0) } ?? .null))
        fields.append(("durationSeconds", .number(JSONNumber(call.durationSeconds))))
        events.append(UserEvent(kind: .callEnded, data: .object(JSONObject(fields)), recipients: everyone(call)))
        return true
    }

    private static func allCalleesBusy(_ call: Call) -> Bool {
        call.participants.allSatisfy { $0.userId == call.callerId || $0.state == .busy }
    }

    private static func stopTimeoutIfNobodyRings(_ call: inout Call) {
        if !call.participants.contains(where: { $0.state == .ringing }) { call.timeoutAt = nil }
    }

    private static func everyone(_ call: Call) -> [String] { call.participants.map(\.userId) }

    private static func callOnly(_ call: Call) -> JSONValue {
        .object(JSONObject([("callId", .string(call.id))]))
    }

    private static func subject(_ call: Call, _ userId: String) -> JSONValue {
        .object(JSONObject([("callId", .string(call.id)), ("userId", .string(userId))]))
    }

    private static func rejected(_ call: Call, userId: String, reason: String, to recipients: [String]) -> UserEvent {
        UserEvent(
            kind: .callRejected,
            data: .object(
                JSONObject([
                    ("callId", .string(call.id)), ("userId", .string(userId)), ("reason", .string(reason)),
                ])),
            recipients: recipients)
    }
}

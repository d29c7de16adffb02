import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyHTTP
import ParleyJSON
import ParleyMessageModel
import ParleyMessaging
import ParleyObservability
import ParleyPostgres

/// Call signalling: every operation of REST and of the WebSocket frames. Each transition is one transaction that
/// locks the call row, applies `CallMachine` with the database's clock, writes the call back (and, when it ended,
/// the records into the conversations), and publishes the events after the commit through messaging's user events,
/// which reach every device of the recipients on any instance.
public struct CallService: Sendable {
    let database: PostgresClient
    let repository: CallRepository
    let userEvents: UserEvents
    let records: CallRecords
    let notifier: CallNotifier
    let logger: Logger

    /// `call_invite`'s data and `POST /api/calls`'s body, read by one parser (`prefix` names the frame's `data.`).
    public struct InviteRequest: Sendable {
        public var participantIds: [String]
        public var mediaType: String
        public var timeoutSeconds: Int?
        public var userData: String?

        public init(participantIds: [String], mediaType: String, timeoutSeconds: Int? = nil, userData: String? = nil) {
            self.participantIds = participantIds
            self.mediaType = mediaType
            self.timeoutSeconds = timeoutSeconds
            self.userData = userData
        }

        public init(_ object: JSONObject, prefix: String) throws(APIError) {
            func invalid(_ field: String, _ rule: String) -> APIError {
                APIError.validationFailed.with(message: "`\(prefix)\(field)` \(rule)")
            }
            guard case .array(let ids)? = object["participantIds"] else {
                throw invalid("participantIds", "must be an array of user ids")
            }
            participantIds = []
            for id in ids {
                guard case .string(let id) = id else { throw invalid("participantIds", "must be an array of user ids") }
                participantIds.append(id)
            }
            guard case .string(let mediaType)? = object["mediaType"] else {
                throw invalid("mediaType", "must be audio or video")
            }
            self.mediaType = mediaType
            switch object["timeoutSeconds"] {
            case nil, .null?: timeoutSeconds = nil
            case let value?:
                guard let seconds = value.int64Value, let small = Int(exactly: seconds) else {
                    throw invalid("timeoutSeconds", "must be an integer")
                }
                timeoutSeconds = small
            }
            switch object["userData"] {
            case nil, .null?: userData = nil
            case .string(let data)?: userData = data
            default: throw invalid("userData", "must be a string")
            }
        }
    }

    public func invite(_ request: InviteRequest, by principal: Principal) async throws -> CallView {
        guard let mediaType = CallMediaType(rawValue: request.mediaType) else {
            throw APIError.validationFailed.with(message: "`mediaType` must be audio or video")
        }
        let timeout = request.timeoutSeconds ?? CallConfiguration.defaultTimeoutSeconds
        guard (1...CallConfiguration.maxTimeoutSeconds).contains(timeout) else {
            throw APIError.validationFailed.with(
                message: "`timeoutSeconds` must be from 1 to \(CallConfiguration.maxTimeoutSeconds)")
        }
        let userData = request.userData ?? ""
        guard userData.utf8.count <= CallConfiguration.maxUserDataBytes else { throw APIError.callUserDataTooLarge }
        var callees: [String] = []
        for id in request.participantIds where !callees.contains(id) {
            guard (1...64).contains(id.utf8.count) else {
                throw APIError.validationFailed.with(message: "`participantIds` must hold user ids")
            }
            guard id != principal.userId else {
                throw APIError.validationFailed.with(message: "`participantIds` names the callees, not the caller")
            }
            callees.append(id)
        }
        guard !callees.isEmpty else {
            throw APIError.validationFailed.with(message: "`participantIds` must name at least one callee")
        }
        guard callees.count < CallConfiguration.maxParticipants else { throw APIError.tooManyCallParticipants }
        let appId = principal.appId
        let id = "call_" + SecureRandom.token(bytes: 16)
        let (outcome, stored) = try await database.withTransaction { connection in
            let known = try await repository.existingUsers(appId: appId, userIds: callees, on: connection)
            if let missing = callees.first(where: { !known.contains($0) }) {
                throw APIError.userNotFound.with(message: "no user `\(missing)` in this app")
            }
            try await repository.lockUsers(appId: appId, [principal.userId] + callees, on: connection)
            let busy = try await repository.busy(appId: appId, userIds: [principal.userId] + callees, on: connection)
            let verdicts = try await repository.directVerdicts(
                appId: appId, callerId: principal.userId, userIds: callees, on: connection)
            let outcome = try CallMachine.invite(
                id: id, appId: appId, callerId: principal.userId, callerBusy: busy.contains(principal.userId),
                callees: callees.map {
                    .init(userId: $0, busy: busy.contains($0), refusal: Self.refusal(verdicts[$0]))
                }, mediaType: mediaType, userData: userData, timeoutSeconds: timeout,
                now: try await repository.now(on: connection))
            try await repository.insert(outcome.call, on: connection)
            let ringing = outcome.call.participants.filter { $0.state == .ringing }.map(\.userId)
            if !ringing.isEmpty { try await notifier.invited(outcome.call, ringing, connection) }
            try await notifyIfEnded(outcome.call, on: connection)
            return (outcome, try await storeRecordsIfEnded(outcome.call, on: connection))
        }
        await finish(outcome, stored: stored, origin: principal.origin)
        return CallView(outcome.call)
    }

    public func accept(_ rawId: String, by principal: Principal) async throws -> CallView {
        CallView(
            try await transition(rawId, by: principal, exclusive: true, answering: true) {
                call, now, inAnotherCall throws(APIError) in
                try CallMachine.accept(
                    call, userId: principal.userId, sessionId: principal.sessionId, inAnotherCall: inAnotherCall,
                    now: now)
            })
    }

    public func reject(_ rawId: String, by principal: Principal) async throws -> CallView {
        CallView(
            try await transition(rawId, by: principal) { call, now, _ throws(APIError) in
                try CallMachine.reject(call, userId: principal.userId, now: now)
            })
    }

    public func cancel(_ rawId: String, by principal: Principal) async throws -> CallView {
        CallView(
            try await transition(rawId, by: principal) { call, now, _ throws(APIError) in
                try CallMachine.cancel(call, userId: principal.userId, now: now)
            })
    }

    public func hangup(_ rawId: String, by principal: Principal) async throws -> CallView {
        CallView(
            try await transition(rawId, by: principal) { call, now, _ throws(APIError) in
                try CallMachine.hangup(call, userId: principal.userId, now: now)
            })
    }

    /// A call the caller takes part in (a device woken by a VoIP push reads it before showing the call).
    public func call(_ rawId: String, for principal: Principal) async throws -> CallView {
        let id = try Self.callID(rawId)
        guard let call = try await repository.find(id: id, appId: principal.appId, userId: principal.userId) else {
            throw APIError.callNotFound
        }
        return CallView(call)
    }

    /// The calls that ring for the caller or that they are in (a device that reconnects learns of them here: call
    /// events are live only).
    public func liveCalls(for principal: Principal) async throws -> [CallView] {
        try await repository.live(appId: principal.appId, userId: principal.userId).map(CallView.init)
    }

    /// Times out the callees of every call whose deadline passed, one transaction per call; a call another instance
    /// holds is skipped (that one decides). Returns the calls this run changed.
    @discardableResult
    public func sweepOnce(limit: Int = 100) async throws -> Int {
        var changed = 0
        for id in try await repository.dueCallIds(limit: limit) {
            let result = try await database.withTransaction { connection -> (CallMachine.Outcome, [IMMessage])? in
                guard let call = try await repository.lockDue(id: id, on: connection),
                    let outcome = CallMachine.expire(call, now: try await repository.now(on: connection))
                else { return nil }
                try await repository.update(outcome.call, on: connection)
                try await notifyIfEnded(outcome.call, on: connection)
                return (outcome, try await storeRecordsIfEnded(outcome.call, on: connection))
            }
            guard let (outcome, stored) = result else { continue }
            changed += 1
            await finish(outcome, stored: stored, origin: nil)
        }
        return changed
    }

    /// Account deletion's part, inside its transaction: the user hangs up every call they ring in or are in (a
    /// ringing callee rejects, the caller of an unanswered call cancels, anyone else leaves), so no call waits for a
    /// deleted account and their peers hear of it at once. Under the user's call lock, so no accept slips in. Returns
    /// the work after the commit.
    func endCalls(ofDeletedUser userId: String, appId: Int64, on connection: PostgresConnection) async throws
        -> @Sendable () async -> Void
    {
        try await repository.lockUsers(appId: appId, [userId], on: connection)
        var ended: [(CallMachine.Outcome, [IMMessage])] = []
        for id in try await repository.liveCallIds(appId: appId, userId: userId, on: connection) {
            guard let call = try await repository.lock(id: id, appId: appId, on: connection),
                let outcome = try? CallMachine.hangup(
                    call, userId: userId, now: try await repository.now(on: connection))
            else { continue }
            try await repository.update(outcome.call, on: connection)
            try await notifyIfEnded(outcome.call, on: connection)
            ended.append((outcome, try await storeRecordsIfEnded(outcome.call, on: connection)))
        }
        return { [ended] in
            for (outcome, stored) in ended { await finish(outcome, stored: stored, origin: nil) }
        }
    }

    public func prune(endedBeforeHours hours: Int) async throws -> Int {
        try await repository.prune(endedBeforeHours: hours)
    }

    // MARK: Transitions

    /// `exclusive`: the transition may put the user into the call, so it first takes the user's call lock (before
    /// the call row: the one lock order) and hands `apply` whether they are in another call. `answering`: the
    /// transition is the principal's accept (the notifier stops their other devices' ringing).
    private func transition(
        _ rawId: String, by principal: Principal, exclusive: Bool = false, answering: Bool = false,
        _ apply: @escaping @Sendable (Call, Date, _ inAnotherCall: Bool) throws(APIError) -> CallMachine.Outcome
    ) async throws -> Call {
        let id = try Self.callID(rawId)
        let (outcome, stored) = try await database.withTransaction { connection in
            if exclusive { try await repository.lockUsers(appId: principal.appId, [principal.userId], on: connection) }
            guard let call = try await repository.lock(id: id, appId: principal.appId, on: connection),
                call.participant(principal.userId) != nil
            else { throw APIError.callNotFound }
            var inAnotherCall = false
            if exclusive {
                let busy = try await repository.busy(
                    appId: principal.appId, userIds: [principal.userId], on: connection)
                inAnotherCall = !busy.isEmpty
            }
            let outcome = try apply(call, try await repository.now(on: connection), inAnotherCall)
            try await repository.update(outcome.call, on: connection)
            if answering {
                try await notifier.answered(outcome.call, principal.userId, principal.sessionId, connection)
            }
            try await notifyIfEnded(outcome.call, on: connection)
            return (outcome, try await storeRecordsIfEnded(outcome.call, on: connection))
        }
        await finish(outcome, stored: stored, origin: principal.origin)
        return outcome.call
    }

    /// After the commit: the call's events and its records.
    private func finish(_ outcome: CallMachine.Outcome, stored: [IMMessage], origin: String?) async {
        let call = outcome.call
        userEvents.publish(outcome.events, appId: call.appId, origin: origin)
        records.publish(stored, appId: call.appId)
    }

    /// In the transition's transaction: once the call ended, the notifier hears of the callees who never answered
    /// (a busy callee never rang).
    private func notifyIfEnded(_ call: Call, on connection: PostgresConnection) async throws {
        guard call.state == .ended else { return }
        let neverAnswered = call.participants.filter {
            $0.userId != call.callerId && $0.joinedAt == nil && $0.state != .busy
        }.map(\.userId)
        if !neverAnswered.isEmpty { try await notifier.ended(call, neverAnswered, connection) }
    }

    private func storeRecordsIfEnded(_ call: Call, on connection: PostgresConnection) async throws -> [IMMessage] {
        guard call.state == .ended else { return [] }
        return try await records.store(Self.records(of: call), appId: call.appId, on: connection)
    }

    /// One record per callee in the caller's 1:1 conversation with them, with that callee's outcome.
    static func records(of call: Call) -> [CallRecords.Record] {
        call.participants.filter { $0.userId != call.callerId }.map { callee in
            let status: String
            var duration = 0
            if let joinedAt = callee.joinedAt {
                status = "completed"
                let leftAt = callee.leftAt ?? call.endedAt ?? joinedAt
                duration = max(0, Int(leftAt.timeIntervalSince(joinedAt).rounded()))
            } else {
                switch callee.state {
                case .rejected: status = "rejected"
                case .busy: status = "busy"
                case .cancelled: status = "cancelled"
                case .timeout, .ringing, .accepted, .left: status = "missed"
                }
            }
            return CallRecords.Record(
                callerId: call.callerId, calleeId: callee.userId,
                msgType: call.mediaType == .video ? .callVideo : .callAudio,
                content: .object(
                    JSONObject([
                        ("callId", .string(call.id)), ("mediaType", .string(call.mediaType.rawValue)),
                        ("status", .string(status)), ("durationSec", .number(JSONNumber(duration))),
                    ])),
                clientMsgId: "\(call.id):\(callee.userId)")
        }
    }

    static func refusal(_ verdict: String?) -> CallMachine.DirectRefusal? {
        switch verdict {
        case "peer_refused"?: .blocked
        case "not_friend"?: .notFriends
        default: nil
        }
    }

    /// Call ids are ours (`call_` + 22 base64url characters): anything else is no call, without a query.
    static func callID(_ raw: String) throws(APIError) -> String {
        guard raw.hasPrefix("call_"), raw.utf8.count <= 64 else { throw APIError.callNotFound }
        return raw
    }
}

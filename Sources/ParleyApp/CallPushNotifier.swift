import ParleyCalls
import ParleyPostgres
import ParleyPush

extension CallNotifier {
    /// Calls' offline push, through push's outbox (calls and push know nothing of each other): each transition
    /// queues its `CallPush` in its own transaction. An invite rings the ringing callees; an accept stops the
    /// accepting callee's other devices (`answered_elsewhere`); the end of a call stops the devices of the callees who
    /// never answered, with the call's end reason (`cancelled`, `timeout`, ...).
    static func push(jobs: PushJobRepository) -> CallNotifier {
        CallNotifier(
            invited: { call, ringing, connection in
                try await jobs.queue(
                    callPush(call, .invite, reason: "", userIds: ringing), appId: call.appId, on: connection)
            },
            answered: { call, userId, sessionId, connection in
                try await jobs.queue(
                    callPush(call, .cancel, reason: CallPush.answeredElsewhere, userIds: [userId], except: sessionId),
                    appId: call.appId, on: connection)
            },
            ended: { call, neverAnswered, connection in
                try await jobs.queue(
                    callPush(call, .cancel, reason: call.endReason?.rawValue ?? "ended", userIds: neverAnswered),
                    appId: call.appId, on: connection)
            })
    }

    private static func callPush(
        _ call: Call, _ action: CallPush.Action, reason: String, userIds: [String], except: String? = nil
    ) -> CallPush {
        CallPush(
            action: action, callId: call.id, callerId: call.callerId, mediaType: call.mediaType.rawValue,
            timeoutSeconds: call.timeoutSeconds, reason: reason, userIds: userIds, exceptSessionId: except)
    }
}

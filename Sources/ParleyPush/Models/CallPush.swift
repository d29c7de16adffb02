import ParleyJSON
import ParleyPostgres

/// A push about a call rather than a message (`push_jobs.call`, migrations/0029): the VoIP push that rings callees
/// with no live socket, or the one that stops the ringing when the call ended before they answered (or a callee
/// answered on another device). Push knows no call type: ParleyApp maps the calls module's transitions onto this.
public struct CallPush: Sendable, Equatable {
    public enum Action: String, Sendable, Equatable {
        /// Ring: a VoIP push (an alert for users without a VoIP token), a high-priority data message on Android.
        case invite
        /// Stop ringing: a "Missed call" alert to APNs alert tokens (unless they answered or rejected it themselves)
        /// and a data message on Android; never a VoIP push, which a VoIP-based client would show as a new call.
        case cancel
    }

    public var action: Action
    public var callId: String
    public var callerId: String
    /// "audio" or "video".
    public var mediaType: String
    public var timeoutSeconds: Int
    /// Why the ringing stops (`cancelled`, `timeout`, `rejected`, `hangup`, `busy`, `answered_elsewhere`); "" for an
    /// invite.
    public var reason: String
    /// Whose devices are pushed.
    public var userIds: [String]
    /// A session whose tokens are skipped (the device that answered: it knows).
    public var exceptSessionId: String?

    public init(
        action: Action, callId: String, callerId: String, mediaType: String, timeoutSeconds: Int, reason: String = "",
        userIds: [String], exceptSessionId: String? = nil
    ) {
        self.action = action
        self.callId = callId
        self.callerId = callerId
        self.mediaType = mediaType
        self.timeoutSeconds = timeoutSeconds
        self.reason = reason
        self.userIds = userIds
        self.exceptSessionId = exceptSessionId
    }

    /// The reason a callee who answered on another device stops ringing.
    public static let answeredElsewhere = "answered_elsewhere"

    /// Whether a user without a VoIP token is told by an alert: a missed call, not one they answered or rejected.
    var alertsMissedCall: Bool { action == .cancel && !["answered_elsewhere", "rejected", "busy"].contains(reason) }

    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("action", .string(action.rawValue)), ("callId", .string(callId)), ("callerId", .string(callerId)),
            ("mediaType", .string(mediaType)), ("timeoutSeconds", .number(JSONNumber(timeoutSeconds))),
            ("reason", .string(reason)), ("userIds", .array(userIds.map { .string($0) })),
        ]
        if let exceptSessionId { members.append(("exceptSessionId", .string(exceptSessionId))) }
        return .object(JSONObject(members))
    }

    init?(json text: String) {
        guard let object = (try? JSONValue.parse(text))?.objectValue,
            let action = object["action"]?.stringValue.flatMap(Action.init(rawValue:)),
            let callId = object["callId"]?.stringValue, let callerId = object["callerId"]?.stringValue,
            let mediaType = object["mediaType"]?.stringValue,
            let timeout = object["timeoutSeconds"]?.int64Value.flatMap({ Int(exactly: $0) }),
            case .array(let users)? = object["userIds"]
        else { return nil }
        self.init(
            action: action, callId: callId, callerId: callerId, mediaType: mediaType, timeoutSeconds: timeout,
            reason: object["reason"]?.stringValue ?? "", userIds: users.compactMap(\.stringValue),
            exceptSessionId: object["exceptSessionId"]?.stringValue)
    }
}

extension PushJobRepository {
    /// Queues `push` on `connection`, inside the caller's transaction (the call's transition), when the app's push is
    /// enabled: the outbox row commits or rolls back with the transition.
    public func queue(_ push: CallPush, appId: Int64, on connection: PostgresConnection) async throws {
        guard !push.userIds.isEmpty else { return }
        _ = try await connection.query(
            """
            INSERT INTO push_jobs (app_id, call)
            SELECT \(appId), \(push.json.serializedString)::jsonb
            WHERE EXISTS (SELECT 1 FROM app_push_settings s WHERE s.app_id = \(appId) AND s.enabled)
            """)
    }
}

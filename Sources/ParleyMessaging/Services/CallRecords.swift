import ParleyAuth
import ParleyJSON
import ParleyMessageModel
import ParleyPostgres

/// The `callAudio` / `callVideo` record a finished call leaves in the caller's 1:1 conversation with a callee
/// (ParleyCalls writes it when a call ends). Stored through the single send, in the transaction that ended the
/// call, so a call has its record exactly when it ended; push is disabled for it (`{"disabled":true}`): a record
/// never rings nor alerts. The send's own rules apply (a block, the friends-only policy): a refused record is
/// simply not stored.
public struct CallRecords: Sendable {
    let messages: MessageRepository
    let events: MessagingEvents
    let storedCounts: DailyMessageCounts?

    public struct Record: Sendable {
        public var callerId: String
        public var calleeId: String
        public var msgType: MessageType
        public var content: JSONValue
        /// Unique per call and callee: a record written twice is stored once.
        public var clientMsgId: String

        public init(callerId: String, calleeId: String, msgType: MessageType, content: JSONValue, clientMsgId: String) {
            self.callerId = callerId
            self.calleeId = calleeId
            self.msgType = msgType
            self.content = content
            self.clientMsgId = clientMsgId
        }
    }

    /// Stores the records on the caller's transaction; returns those stored (to publish after the commit).
    public func store(_ records: [Record], appId: Int64, on connection: PostgresConnection) async throws -> [IMMessage]
    {
        var stored: [IMMessage] = []
        for record in records {
            var message = MessageRepository.NewMessage(
                appId: appId, conversationId: ConversationID.single(record.callerId, record.calleeId),
                chatType: .single, fromId: record.callerId, toId: record.calleeId, msgType: record.msgType,
                content: record.content.serialized(), extra: nil, clientMsgId: record.clientMsgId,
                contentValue: record.content, extraValue: nil)
            message.pushOptions = #"{"disabled":true}"#
            if case .stored(let message) = try await messages.send(message, on: connection) { stored.append(message) }
        }
        return stored
    }

    /// After the commit: to both sides' devices, as any stored message.
    public func publish(_ stored: [IMMessage], appId: Int64) {
        guard !stored.isEmpty else { return }
        storedCounts?.add(appId: appId, count: stored.count)
        for message in stored {
            events.publish(
                MessagingEvent(
                    appId: appId, conversationId: message.conversationId, audience: .conversationMembers,
                    origin: nil, payload: .message(message), messageJSON: message.jsonBytes()))
        }
    }
}

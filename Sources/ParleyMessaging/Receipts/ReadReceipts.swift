import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyLifecycle
import ParleyObservability
import ParleyPostgres
import Synchronization

/// Group read receipts: who read a message (`GET /api/im/messages/{id}/reads`), and `read_receipts` events that tell
/// senders their messages' new read counts. Read marks only note which messages they passed; once a second the
/// noted messages' counts are read in one statement and each sender gets one event per conversation, so a message's
/// count goes out at most once a second (per instance) however many members read it meanwhile.
public final class ReadReceipts: Sendable {
    struct Pending: Hashable {
        var appId: Int64
        var conversationId: String
    }

    let repository: ReadReceiptRepository
    let messages: MessageService
    let events: MessagingEvents
    /// Where who read a message is read (a lag-tolerant read: the read points themselves are written in batches).
    let reads: PostgresReadRouter
    let logger: Logger
    /// Per conversation, the seqs read marks passed since the last flush: `(after, through]`.
    private let pending = Mutex<[Pending: (after: Int64, through: Int64)]>([:])

    /// The newest messages of a range whose counts are sent (a reader catching up on a long history moves every
    /// count, but senders look at the recent ones).
    static let maxMessagesPerFlush = 100
    public static let maxPageSize = 200

    init(
        repository: ReadReceiptRepository, messages: MessageService, events: MessagingEvents,
        reads: PostgresReadRouter, logger: Logger
    ) {
        self.repository = repository
        self.messages = messages
        self.events = events
        self.reads = reads
        self.logger = logger
    }

    /// A member's read point in a group moved from `old` to `new`.
    func readMoved(appId: Int64, conversationId: String, from old: Int64, to new: Int64) {
        guard new > old, conversationId.hasPrefix("sg:") else { return }
        pending.withLock { pending in
            let key = Pending(appId: appId, conversationId: conversationId)
            if let known = pending[key] {
                pending[key] = (min(known.after, old), max(known.through, new))
            } else {
                pending[key] = (old, new)
            }
        }
    }

    /// Sends the counts of every message read marks passed since the last flush.
    public func flush() async {
        let taken = pending.withLock { pending in
            let taken = pending
            pending.removeAll()
            return taken
        }
        guard !taken.isEmpty else { return }
        do {
            let updates = try await repository.updates(
                taken.map { (key, range) in (key.appId, key.conversationId, range.after, range.through) },
                perConversation: Self.maxMessagesPerFlush)
            for event in Self.events(updates) { events.publish(event) }
        } catch {
            logger.warning(
                "read receipts not sent; senders see the counts when they ask",
                ["conversations": .int(taken.count), "error": .string(String(describing: error))])
        }
    }

    /// One `read_receipts` event per sender and conversation, messages in seq order.
    static func events(_ updates: [ReadReceiptRepository.Update]) -> [MessagingEvent] {
        struct Recipient: Hashable {
            var appId: Int64
            var conversationId: String
            var senderId: String
        }
        var order: [Recipient] = []
        var receipts: [Recipient: [JSONValue]] = [:]
        for update in updates {
            let recipient = Recipient(
                appId: update.appId, conversationId: update.conversationId, senderId: update.senderId)
            if receipts[recipient] == nil { order.append(recipient) }
            receipts[recipient, default: []].append(
                .object(
                    JSONObject([
                        ("msgId", .string(update.messageId)), ("seq", .number(JSONNumber(update.seq))),
                        ("readCount", .number(JSONNumber(update.readCount))),
                    ])))
        }
        return order.map { recipient in
            MessagingEvent(
                appId: recipient.appId, conversationId: "", audience: .user(recipient.senderId), origin: nil,
                payload: .userEvent(
                    .readReceipts,
                    .object(
                        JSONObject([
                            ("conversationId", .string(recipient.conversationId)),
                            ("receipts", .array(receipts[recipient] ?? [])),
                        ]))))
        }
    }

    /// Flushes once a second while the server serves.
    var service: PeriodicService<ContinuousClock> {
        PeriodicService("read receipts", every: .seconds(1)) { [self] in await flush() }
    }

    /// A page of a message's readers.
    public struct Page: Sendable, Encodable {
        public var msgId: String
        public var conversationId: String
        public var readCount: Int64
        public var unreadCount: Int64
        public var readers: [String]
        /// null at the end (written out, as every page cursor is).
        public var cursor: String?
        public var hasMore: Bool

        enum CodingKeys: String, CodingKey {
            case msgId, conversationId, readCount, unreadCount, readers, cursor, hasMore
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(msgId, forKey: .msgId)
            try c.encode(conversationId, forKey: .conversationId)
            try c.encode(readCount, forKey: .readCount)
            try c.encode(unreadCount, forKey: .unreadCount)
            try c.encode(readers, forKey: .readers)
            try c.encode(cursor, forKey: .cursor)
            try c.encode(hasMore, forKey: .hasMore)
        }
    }

    /// Who read the message (the sender aside, members who joined after it aside), in user id order, for a member who
    /// sees the message; a group larger than `maxGroupMembers` answers 1145.
    public func readers(of messageId: Int64, after cursor: String?, limit: Int, for principal: Principal)
        async throws -> Page
    {
        let (message, counts, found) = try await reads.read { [messages, repository] database in
            let message = try await messages.message(messageId, for: principal, on: database)
            let repository = repository.on(database)
            let counts = try await repository.counts(appId: principal.appId, message: message)
            guard counts.members <= ReadReceiptRepository.maxGroupMembers else {
                throw APIError.readReceiptsGroupTooLarge
            }
            let readers = try await repository.readers(
                appId: principal.appId, message: message, after: cursor, limit: limit)
            return (message, counts, readers)
        }
        var readers = found
        let hasMore = readers.count > limit
        if hasMore { readers.removeLast() }
        return Page(
            msgId: message.id, conversationId: message.conversationId, readCount: counts.read,
            unreadCount: counts.unread, readers: readers, cursor: hasMore ? readers.last : nil, hasMore: hasMore)
    }
}

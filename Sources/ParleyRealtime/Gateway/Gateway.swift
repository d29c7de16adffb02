import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyMessaging
import ParleyObservability
import Synchronization

/// A request frame another feature answers (ParleyApp hands them in, so the gateway depends on no such feature):
/// the frame's `data` and the caller in, the ack's data out; a thrown error is answered as an `error` frame.
public typealias FrameHandler = @Sendable (_ data: JSONObject, _ principal: Principal) async throws -> [UInt8]

/// What every gateway connection shares: the services, the registry of online connections, delivery.
final class Gateway: Sendable {
    let configuration: RealtimeConfiguration
    let messaging: MessagingModule
    let registry: ConnectionRegistry
    let fanOut: FanOut
    let relay: any ClusterRelay
    /// Where connections are recorded for other features (offline push); nil in tests that build a bare gateway.
    let presence: ClusterPresence?
    /// Statuses, subscriptions and `presence` events (nil in tests that build a bare gateway).
    let presenceHub: PresenceHub?
    let logger: Logger
    /// Frames of other features, by type (call signalling's `call_*`).
    let frameHandlers: [String: FrameHandler]
    /// Chat rooms (nil: bare test gateways, which answer room frames as unknown).
    let rooms: RoomService?
    private let nextConnectionID = Atomic<UInt64>(0)

    init(
        configuration: RealtimeConfiguration, messaging: MessagingModule, registry: ConnectionRegistry,
        fanOut: FanOut, relay: any ClusterRelay, presence: ClusterPresence? = nil, presenceHub: PresenceHub? = nil,
        logger: Logger, frameHandlers: [String: FrameHandler] = [:], rooms: RoomService? = nil
    ) {
        self.configuration = configuration
        self.messaging = messaging
        self.registry = registry
        self.fanOut = fanOut
        self.relay = relay
        self.presence = presence
        self.presenceHub = presenceHub
        self.logger = logger
        self.frameHandlers = frameHandlers
        self.rooms = rooms
    }

    func newConnectionID() -> UInt64 { nextConnectionID.add(1, ordering: .relaxed).newValue }

    /// Tells this process's connection ids from other instances' in `Principal.origin`.
    private let originTag = String(UInt64.random(in: 0...UInt64.max), radix: 36)

    /// The origin of the frames connection `id` of `principal` sends (`GatewayEntry.origin`).
    func connectionOrigin(_ principal: Principal, _ id: UInt64) -> String {
        "\(principal.sessionId)#\(originTag).\(id)"
    }

    /// Answers one request frame with its `ack` or `error` frame. Every operation goes through the same
    /// services as the REST routes.
    func answer(
        _ frame: ClientFrame, principal: Principal, connection: GatewayEntry? = nil,
        connectionRooms: ConnectionRooms, typing: inout TypingLimiter
    ) async -> [UInt8] {
        // The changes a frame makes reach the session's other connections: only this one has the ack.
        var principal = principal
        if let connection { principal.origin = connection.origin }
        do {
            return try await perform(
                frame, principal: principal, connection: connection, connectionRooms: connectionRooms,
                typing: &typing)
        } catch {
            return ServerFrame.error(reqId: frame.reqId, APIError.mapping(error, logger: logger))
        }
    }

    private func perform(
        _ frame: ClientFrame, principal: Principal, connection: GatewayEntry?, connectionRooms: ConnectionRooms,
        typing: inout TypingLimiter
    ) async throws -> [UInt8] {
        let reqId = frame.reqId
        if let rooms, let answer = try await rooms.answer(frame, principal: principal, connection: connectionRooms) {
            return answer
        }
        switch frame.type {
        case "ping":
            return ServerFrame.ack(
                reqId: reqId,
                data: Array(#"{"serverTime":"#.utf8)
                    + JSONValue.string(ISO8601.format(Date())).serialized() + [UInt8(ascii: "}")])
        case "send":
            let request = try MessageService.SendRequest(frame.data, prefix: "data.")
            return ServerFrame.ack(reqId: reqId, data: try await messaging.messages.send(request, from: principal).json)
        case "revoke":
            let target = try RevokeTarget(frame.data, prefix: "data.")
            return ServerFrame.ack(
                reqId: reqId, data: try await messaging.messages.revoke(target, by: principal).jsonBytes())
        case "edit":
            let id = try IMMessage.parseID(try frame.messageID())
            let extra: JSONValue?? = frame.data["extra"].map { .some($0) }
            let request = MessageService.EditRequest(content: try frame.value("content"), extra: extra)
            return ServerFrame.ack(
                reqId: reqId,
                data: try await messaging.messages.edit(messageId: id, request, by: principal)
                    .jsonBytes())
        case "read":
            let conversationId = try ConversationID.validated(try frame.string("conversationId"))
            let seq = try frame.integer("seq")
            guard seq >= 0 else { throw APIError.validationFailed.with(message: "`data.seq` must be 0 or more") }
            return ServerFrame.ack(
                reqId: reqId,
                try await messaging.conversations.markRead(
                    conversationId, seq: seq,
                    for: principal))
        case "typing":
            let conversationId = try ConversationID.validated(try frame.string("conversationId"))
            let members = try await fanOut.members.members(appId: principal.appId, conversationId: conversationId)
            // As every route that takes a conversation id: an outsider cannot tell the conversation exists.
            guard members.contains(principal.userId) else { throw APIError.conversationNotFound }
            if typing.allow(now: ContinuousClock.now) {
                let delivery = Delivery(
                    appId: principal.appId, conversationId: conversationId,
                    audience: .conversationMembers, origin: nil,
                    excludedUserId: principal.userId, membershipChanged: false,
                    frame: RelayDescriptor.typingFrame(
                        conversationId: conversationId,
                        userId: principal.userId))
                // A routing relay gets it from the fan-out.
                await fanOut.deliver(delivery)
                if !relay.routesByRecipient {
                    relay.publish(
                        RelayDescriptor.typing(
                            appId: principal.appId, conversationId: conversationId,
                            userId: principal.userId))
                }
            }
            return ServerFrame.ack(reqId: reqId, data: Array("{}".utf8))
        case "sync":
            var cursor: SyncCursor?
            if let raw = try frame.optionalString("cursor"), !raw.isEmpty {
                guard let parsed = SyncCursor(raw) else { throw APIError.invalidCursor }
                cursor = parsed
            }
            let limit = try frame.optionalInteger("limit") ?? Int64(SyncService.defaultPageSize)
            guard (1...Int64(SyncService.maxPageSize)).contains(limit) else {
                throw APIError.validationFailed.with(
                    message: "`data.limit` must be from 1 to \(SyncService.maxPageSize)")
            }
            return ServerFrame.ack(
                reqId: reqId,
                try await messaging.sync.sync(
                    after: cursor, limit: Int(limit),
                    for: principal))
        case "presence_set", "presence_subscribe", "presence_unsubscribe":
            guard let presenceHub, let connection else {
                throw APIError.unknownFrameType.with(message: "unknown frame type `\(frame.type)`")
            }
            return ServerFrame.ack(reqId: reqId, data: try await presenceHub.answer(frame, connection: connection))
        default:
            if let handler = frameHandlers[frame.type] {
                return ServerFrame.ack(reqId: reqId, data: try await handler(frame.data, principal))
            }
            throw APIError.unknownFrameType.with(message: "unknown frame type `\(frame.type)`")
        }
    }
}

/// At most `perSecond` typing notices per connection and second.
struct TypingLimiter: Sendable {
    let perSecond: Int
    private var windowStart: ContinuousClock.Instant?
    private var count = 0

    init(perSecond: Int) { self.perSecond = perSecond }

    mutating func allow(now: ContinuousClock.Instant) -> Bool {
        if let start = windowStart, now - start < .seconds(1) {
            guard count < perSecond else { return false }
            count += 1
            return true
        }
        windowStart = now
        count = 1
        return perSecond > 0
    }
}

extension ClientFrame {
    /// `msgId` as a string or a number.
    func messageID() throws(APIError) -> String {
        switch data["msgId"] {
        case .string(let id)?: return id
        case .number(let number)?: return number.text
        default: throw APIError.validationFailed.with(message: "`data.msgId` must be a message id")
        }
    }
}

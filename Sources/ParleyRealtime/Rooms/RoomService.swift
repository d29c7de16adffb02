import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyLifecycle
import ParleyMessaging
import ParleyNet
import ParleyObservability
import Synchronization

/// Chat rooms: no membership to keep, delivery to whoever is inside (a WebSocket that entered), on every instance.
/// A message is one INSERT (its bounded history), an ack, one frame encoded once for the connections inside here,
/// and one relay descriptor carrying the message to the other instances. No unread, conversation, sync or push.
final class RoomService: Sendable {
    let configuration: RoomConfiguration
    let repository: RoomRepository
    let index: RoomIndex
    let relay: any ClusterRelay
    let messages: MessageService
    /// This instance's row in `realtime_instances` (nil: counts stay local, in bare test gateways).
    let instanceId: String?
    let logger: Logger

    /// As presence readers count them: an instance silent this long has crashed.
    static let staleSeconds = 15
    /// Every this many writes of the online counts, all of this instance's rooms are written.
    static let fullOnlineWriteEvery = 15

    init(
        configuration: RoomConfiguration, repository: RoomRepository, relay: any ClusterRelay, messages: MessageService,
        instanceId: String?, logger: Logger
    ) {
        self.configuration = configuration
        self.repository = repository
        self.relay = relay
        index = RoomIndex(interest: { key, present in relay.roomInterest(key, present: present) })
        self.messages = messages
        self.instanceId = instanceId
        self.logger = logger
    }

    // MARK: REST

    func create(appId: Int64, _ request: RoomCreateRequest, creatorId: String?) async throws -> Room {
        try await repository.create(appId: appId, name: request.name, creatorId: creatorId, ex: request.ex)
    }

    func room(_ key: RoomKey) async throws -> Room {
        guard let room = try await repository.find(key) else { throw APIError.roomNotFound }
        return room
    }

    func info(_ key: RoomKey) async throws -> RoomInfo {
        RoomInfo(room: try await room(key), online: try await online(key))
    }

    /// Connections inside the room: this instance's now, the others' as they last wrote them (at most
    /// `onlineInterval` old, plus the time a write takes).
    func online(_ key: RoomKey) async throws -> Int {
        index.online(key)
            + (try await repository.onlineElsewhere(key, exceptInstance: instanceId, staleSeconds: Self.staleSeconds))
    }

    func history(_ key: RoomKey, _ query: RoomHistoryQuery) async throws -> RoomMessagePage {
        _ = try await room(key)
        let page = try await repository.history(key, query, bound: configuration.bound)
        return RoomMessagePage(
            messages: page.messages, hasMore: page.hasMore,
            nextCursor: page.hasMore ? page.messages.last.map { String($0.id) } : nil)
    }

    /// `byUser` nil: the app's backend, which dismisses any room of its app.
    func dismiss(_ key: RoomKey, byUser userId: String?) async throws {
        let room = try await room(key)
        if let userId, room.creatorId != userId { throw APIError.notRoomCreator }
        guard try await repository.dismiss(key) else { throw APIError.roomNotFound }
        index.dismiss(key, frame: Self.dismissedFrame(key))
        relay.publish(serialized: RoomDescriptor.dismissed(key).serialized())
    }

    static func dismissedFrame(_ key: RoomKey) -> [UInt8] {
        ServerFrame.encoded(
            type: "room_dismissed", json: .object(JSONObject([("roomId", .string(String(key.roomId)))])))
    }

    // MARK: WebSocket

    /// `room_enter {roomId}`: the connection is inside from now on (messages sent meanwhile may arrive before the
    /// ack and again in its history: clients keep one per id); the ack carries the room, its online count and the
    /// newest `enterHistory` messages, newest first.
    func enter(_ data: JSONObject, principal: Principal, connection: ConnectionRooms) async throws -> [UInt8] {
        let key = RoomKey(appId: principal.appId, roomId: try RoomID.parse(data["roomId"], field: "data.roomId"))
        // Refused before the database is asked; `enter` below checks again.
        if connection.membership.isFull && !connection.membership.contains(key.roomId) { throw APIError.tooManyRooms }
        let room = try await room(key)
        switch connection.membership.enter(key.roomId) {
        case .entered:
            guard let loop = connection.loop else { throw APIError.serviceUnavailable }
            index.enter(key, connection, on: loop)
        case .alreadyInside: break
        case .full: throw APIError.tooManyRooms
        case .closed: throw APIError.serviceUnavailable
        }
        do {
            var history: (messages: [RoomMessage], hasMore: Bool) = ([], false)
            if configuration.enterHistory > 0 {
                history = try await repository.history(
                    key, RoomHistoryQuery(limit: configuration.enterHistory), bound: configuration.bound)
            }
            let info = RoomInfo(room: room, online: try await online(key))
            return try JSONCoding.bytesEncoder.encode(
                RoomEntered(room: info, messages: history.messages, hasMore: history.hasMore))
        } catch {
            leave(key, connection: connection)
            throw error
        }
    }

    struct RoomEntered: Encodable {
        var room: RoomInfo
        var messages: [RoomMessage]
        var hasMore: Bool
    }

    /// `room_leave {roomId}`: `left` false when the connection was not inside (not an error).
    func leave(_ data: JSONObject, principal: Principal, connection: ConnectionRooms) throws -> [UInt8] {
        let roomId = try RoomID.parse(data["roomId"], field: "data.roomId")
        let left = leave(RoomKey(appId: principal.appId, roomId: roomId), connection: connection)
        return JSONValue.object(JSONObject([("roomId", .string(String(roomId))), ("left", .bool(left))])).serialized()
    }

    @discardableResult
    private func leave(_ key: RoomKey, connection: ConnectionRooms) -> Bool {
        guard connection.membership.leave(key.roomId), let loop = connection.loop else { return false }
        index.leave(key, connectionId: connection.connectionId, on: loop)
        return true
    }

    /// The socket closed: it leaves every room it was inside.
    func closed(_ connection: ConnectionRooms) {
        let rooms = connection.closed()
        guard let loop = connection.loop else { return }
        for roomId in rooms {
            index.leave(
                RoomKey(appId: connection.appId, roomId: roomId), connectionId: connection.connectionId, on: loop)
        }
    }

    /// `send` with `chatType: "room"` and `toId` the room: the connection must be inside. Acked with the message;
    /// delivered to everyone else inside, here and on the other instances.
    func send(_ data: JSONObject, principal: Principal, connection: ConnectionRooms) async throws -> [UInt8] {
        let request = try RoomSendRequest(data)
        let key = RoomKey(appId: principal.appId, roomId: request.roomId)
        guard connection.membership.contains(key.roomId) else { throw APIError.notInRoom }
        let checked = try await messages.checkRoomMessage(request.send, from: principal)
        guard
            let message = try await repository.insert(
                key, fromId: principal.userId, msgType: checked.msgType.rawValue, content: checked.wireContent,
                extra: checked.wireExtra, clientMsgId: checked.clientMsgId, command: request.send.noUnread)
        else { throw APIError.roomNotFound }
        let json = message.jsonBytes()
        index.deliver(ServerFrame.encoded(type: "message", data: json), to: key, excluding: connection.connectionId)
        relay.publish(serialized: RoomDescriptor.message(message, json: json).serialized(), toRoom: key)
        return json
    }

    // MARK: Other instances

    func received(_ descriptor: RoomDescriptor) async {
        switch descriptor {
        case .message(let key, let json):
            index.deliver(ServerFrame.encoded(type: "message", data: json), to: key)
        case .messageID(let key, let id):
            do {
                for message in try await repository.messages(ids: [id]) {
                    index.deliver(ServerFrame.encoded(type: "message", data: message.jsonBytes()), to: key)
                }
            } catch {
                logger.warning(
                    "could not load a relayed room message", ["id": .int(Int(id)), "error": .string("\(error)")])
            }
        case .dismissed(let key):
            index.dismiss(key, frame: Self.dismissedFrame(key))
        }
    }

    // MARK: Services

    func backgroundServices(coordinator: CoordinatorRole) -> [any Service] {
        let repository = repository
        let index = index
        let logger = logger
        let bound = configuration.bound
        var services: [any Service] = [
            PeriodicService("room history prune", every: configuration.pruneInterval, on: .coordinator(coordinator)) {
                do {
                    _ = try await repository.prune(bound: bound)
                } catch {
                    logger.warning("room history prune failed", ["error": .string(String(describing: error))])
                }
            }
        ]
        if let instanceId {
            let runs = Atomic<Int>(0)
            services.append(
                PeriodicService("room online counts", every: configuration.onlineInterval) {
                    // Now and then everything: rows lost with the instance's row (another instance pruned it after
                    // a long outage; presence recreates it) come back without waiting for a change.
                    if runs.add(1, ordering: .relaxed).newValue % Self.fullOnlineWriteEvery == 0 {
                        index.markAllChanged()
                    }
                    let changed = index.takeChanged()
                    guard !changed.isEmpty else { return }
                    do {
                        try await repository.writeOnline(instanceId: instanceId, changed)
                    } catch {
                        // The instance row may be missing (presence recreates it): write everything next time.
                        index.markAllChanged()
                        logger.warning(
                            "could not write room online counts", ["error": .string(String(describing: error))])
                    }
                })
        }
        return services
    }
}

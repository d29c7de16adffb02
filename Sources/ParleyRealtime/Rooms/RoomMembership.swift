import ParleyNet
import ParleyWebSocket

/// The rooms one connection is inside, bounded by `limit` (`PARLEY_ROOM_MAX_PER_CONNECTION`). Pure; the
/// connection keeps it on its loop. Once closed nothing can be entered, so a `room_enter` answered after the
/// socket closed leaves nothing behind in the room index.
struct RoomMembership: Sendable, Equatable {
    let limit: Int
    private(set) var rooms: Set<Int64> = []
    private(set) var closed = false

    init(limit: Int) { self.limit = limit }

    enum Entering: Equatable {
        case entered
        /// Entering again is not an error: the ack repeats the room's state.
        case alreadyInside
        case full
        case closed
    }

    mutating func enter(_ roomId: Int64) -> Entering {
        guard !closed else { return .closed }
        if rooms.contains(roomId) { return .alreadyInside }
        guard rooms.count < limit else { return .full }
        rooms.insert(roomId)
        return .entered
    }

    /// True when the connection was inside.
    mutating func leave(_ roomId: Int64) -> Bool { rooms.remove(roomId) != nil }

    func contains(_ roomId: Int64) -> Bool { rooms.contains(roomId) }

    var isFull: Bool { rooms.count >= limit }

    /// Closes the membership and returns the rooms it was inside.
    mutating func close() -> Set<Int64> {
        closed = true
        defer { rooms = [] }
        return rooms
    }
}

/// A connection's room state as the gateway's request handling and the room index see it: the membership, and the
/// socket. Loop-confined like `GatewayConnection` (its requests are answered on its loop, it is closed there, and the
/// index touches it only on that loop), hence `@unchecked Sendable`.
final class ConnectionRooms: @unchecked Sendable {
    var membership: RoomMembership
    private(set) var connectionId: UInt64 = 0
    private(set) var appId: Int64 = 0
    private(set) var loop: EventLoop?
    /// The socket while it is open: the room index writes frames to it directly, with no hop and no closure per
    /// recipient. Let go when it closes (the session holds this object through its handler).
    private(set) var session: WebSocketSession?

    init(limit: Int) { membership = RoomMembership(limit: limit) }

    /// The socket opened as `entry`.
    func opened(_ entry: GatewayEntry, session: WebSocketSession) {
        connectionId = entry.id
        appId = entry.appId
        loop = session.loop
        self.session = session
    }

    /// The socket closed: the rooms it was inside (for the index to forget it there); nothing can be entered now.
    func closed() -> Set<Int64> {
        session = nil
        return membership.close()
    }
}

import ParleyNet
import ParleyWebSocket
import Synchronization

/// Who is inside which room on this instance, indexed room -> connections on each event loop: a message to a room
/// of 10,000 costs one lookup under one lock (which loops hold members), one hop per such loop, and then only the
/// socket writes of the frame encoded once; no scan of the registry, no per-recipient lookup. Each loop's part is
/// only touched on that loop (a connection and its room state belong to its loop).
final class RoomIndex: Sendable {
    /// One loop's members, touched only on `loop`.
    private final class LoopRooms: @unchecked Sendable {
        let loop: EventLoop
        var rooms: [RoomKey: [UInt64: ConnectionRooms]] = [:]
        init(loop: EventLoop) { self.loop = loop }
    }

    private struct State {
        var loops: [ObjectIdentifier: LoopRooms] = [:]
        var counts = RoomCounts<ObjectIdentifier>()
    }

    private let state = Mutex(State())
    /// Told, under the lock (so in order), when the first connection here enters a room (true) and when the last
    /// one leaves it or it is dismissed (false): a routing relay subscribes to the room's messages then.
    private let interest: (@Sendable (RoomKey, Bool) -> Void)?

    init(interest: (@Sendable (RoomKey, Bool) -> Void)? = nil) {
        self.interest = interest
    }

    /// Records that `connection` (opened on `loop`) is inside the room.
    func enter(_ key: RoomKey, _ connection: ConnectionRooms, on loop: EventLoop) {
        let rooms = state.withLock { state -> LoopRooms in
            let id = ObjectIdentifier(loop)
            let rooms = state.loops[id] ?? LoopRooms(loop: loop)
            state.loops[id] = rooms
            if state.counts.total(key) == 0 { interest?(key, true) }
            state.counts.add(key, on: id)
            return rooms
        }
        let connectionId = connection.connectionId
        Self.onLoop(loop) { rooms.rooms[key, default: [:]][connectionId] = connection }
    }

    func leave(_ key: RoomKey, connectionId: UInt64, on loop: EventLoop) {
        guard
            let rooms = state.withLock({ state -> LoopRooms? in
                let id = ObjectIdentifier(loop)
                let before = state.counts.total(key)
                state.counts.remove(key, on: id)
                if before > 0 && state.counts.total(key) == 0 { interest?(key, false) }
                return state.loops[id]
            })
        else { return }
        Self.onLoop(loop) {
            guard var members = rooms.rooms[key] else { return }
            members[connectionId] = nil
            rooms.rooms[key] = members.isEmpty ? nil : members
        }
    }

    /// Connections inside the room on this instance.
    func online(_ key: RoomKey) -> Int { state.withLock { $0.counts.total(key) } }

    /// Writes `frame` to every connection inside the room here but `excluded`. Always queued, even on the caller's
    /// own loop: the sender's ack goes out before the thousands of writes of the fan-out, not after them.
    func deliver(_ frame: [UInt8], to key: RoomKey, excluding excluded: UInt64? = nil) {
        for rooms in loops(key) {
            rooms.loop.execute {
                guard let members = rooms.rooms[key] else { return }
                for (connectionId, connection) in members where connectionId != excluded {
                    _ = connection.session?.send(encodedFrame: frame)
                }
            }
        }
    }

    /// Empties the room here (it was dismissed): each connection inside gets `frame` and is no longer inside.
    func dismiss(_ key: RoomKey, frame: [UInt8]) {
        let targets = state.withLock { state -> [LoopRooms] in
            let targets = state.counts.loops(key).compactMap { state.loops[$0] }
            if state.counts.total(key) > 0 { interest?(key, false) }
            state.counts.removeAll(key)
            return targets
        }
        for rooms in targets {
            Self.onLoop(rooms.loop) {
                guard let members = rooms.rooms.removeValue(forKey: key) else { return }
                for connection in members.values {
                    _ = connection.membership.leave(key.roomId)
                    _ = connection.session?.send(encodedFrame: frame)
                }
            }
        }
    }

    func takeChanged() -> [(key: RoomKey, online: Int)] { state.withLock { $0.counts.takeChanged() } }
    func markAllChanged() { state.withLock { $0.counts.markAllChanged() } }

    private func loops(_ key: RoomKey) -> [LoopRooms] {
        state.withLock { state in state.counts.loops(key).compactMap { state.loops[$0] } }
    }

    private static func onLoop(_ loop: EventLoop, _ body: @escaping @Sendable () -> Void) {
        if loop.inEventLoop { body() } else { loop.execute(body) }
    }
}

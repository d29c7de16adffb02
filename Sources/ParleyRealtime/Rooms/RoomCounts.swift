/// How many connections of this instance are inside each room, per event loop, and which rooms' totals changed
/// since they were last written (`room_online`). Pure; `RoomIndex` keeps it under its lock. `L` names a loop.
struct RoomCounts<L: Hashable & Sendable>: Sendable {
    private var byRoom: [RoomKey: [L: Int]] = [:]
    private var changed: Set<RoomKey> = []

    mutating func add(_ key: RoomKey, on loop: L) {
        byRoom[key, default: [:]][loop, default: 0] += 1
        changed.insert(key)
    }

    mutating func remove(_ key: RoomKey, on loop: L) {
        guard var loops = byRoom[key], let count = loops[loop] else { return }
        loops[loop] = count > 1 ? count - 1 : nil
        byRoom[key] = loops.isEmpty ? nil : loops
        changed.insert(key)
    }

    /// Forgets the room (dismissed).
    mutating func removeAll(_ key: RoomKey) {
        guard byRoom.removeValue(forKey: key) != nil else { return }
        changed.insert(key)
    }

    /// The loops with connections inside the room: where a message to it goes.
    func loops(_ key: RoomKey) -> [L] { byRoom[key].map { Array($0.keys) } ?? [] }

    func total(_ key: RoomKey) -> Int { byRoom[key]?.values.reduce(0, +) ?? 0 }

    /// The rooms whose totals changed since the last call, with their totals now (0: nobody left here).
    mutating func takeChanged() -> [(key: RoomKey, online: Int)] {
        defer { changed.removeAll(keepingCapacity: true) }
        return changed.map { ($0, total($0)) }
    }

    /// Every room with connections here (rewritten after a failed write).
    mutating func markAllChanged() { changed.formUnion(byRoom.keys) }
}

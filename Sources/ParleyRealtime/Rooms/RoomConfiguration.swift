/// Chat room settings (`PARLEY_ROOM_*`; `ParleyApp` reads them).
public struct RoomConfiguration: Sendable {
    /// A room keeps its newest this many messages (`PARLEY_ROOM_HISTORY_MESSAGES`).
    public var historyMessages = 200
    /// ... of at most this many hours (`PARLEY_ROOM_HISTORY_HOURS`).
    public var historyHours = 24
    /// Messages the `room_enter` ack carries, newest first (`PARLEY_ROOM_ENTER_HISTORY`; 0: none).
    public var enterHistory = 20
    /// A page of history at most (`GET /api/im/rooms/{id}/messages` too).
    public static let maxEnterHistory = RoomHistoryQuery.maxLimit
    /// Rooms one connection may be inside at once (`PARLEY_ROOM_MAX_PER_CONNECTION`).
    public var maxRoomsPerConnection = 10
    /// How often each instance writes its rooms' online counts when they changed: the staleness of the other
    /// instances' part of a room's `online`.
    public var onlineInterval: Duration = .seconds(2)
    /// How often history beyond the bound is deleted.
    public var pruneInterval: Duration = .seconds(60)

    public init() {}

    var bound: RoomHistoryBound { RoomHistoryBound(messages: historyMessages, hours: historyHours) }
}

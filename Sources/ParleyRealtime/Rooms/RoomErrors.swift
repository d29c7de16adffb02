import ParleyHTTP

/// Chat room errors (1505-1509 of the realtime range).
extension APIError {
    /// The room does not exist in the caller's app, or was dismissed.
    public static let roomNotFound = APIError(code: 1505, status: 404, message: "no such room")
    /// A room message from a connection that has not entered the room (`room_enter` first).
    public static let notInRoom = APIError(
        code: 1506, status: 403, message: "this connection is not inside the room: send `room_enter` first")
    /// The connection is inside `PARLEY_ROOM_MAX_PER_CONNECTION` rooms already.
    public static let tooManyRooms = APIError(
        code: 1507, status: 409, message: "this connection is inside too many rooms: leave one first")
    /// Only the user who created a room dismisses it (or the app's backend).
    public static let notRoomCreator = APIError(
        code: 1508, status: 403, message: "only the room's creator may dismiss it")
}

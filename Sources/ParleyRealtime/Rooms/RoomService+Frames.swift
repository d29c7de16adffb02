import ParleyAuth
import ParleyHTTP

extension RoomService {
    /// The answer to a room frame (`room_enter`, `room_leave`, a `send` with `chatType: "room"`); nil for any other
    /// frame.
    func answer(_ frame: ClientFrame, principal: Principal, connection: ConnectionRooms) async throws -> [UInt8]? {
        let data: [UInt8]
        switch frame.type {
        case "room_enter":
            data = try await enter(frame.data, principal: principal, connection: connection)
        case "room_leave":
            data = try leave(frame.data, principal: principal, connection: connection)
        case "send" where frame.data["chatType"]?.stringValue == "room":
            data = try await send(frame.data, principal: principal, connection: connection)
        default:
            return nil
        }
        return ServerFrame.ack(reqId: frame.reqId, data: data)
    }
}

import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyMessaging

/// `POST /api/im/rooms` and `POST /api/admin/rooms`: `{name, ex?}` (the admin route also takes `creatorId`).
struct RoomCreateRequest: Sendable, Equatable {
    var name: String
    /// The JSON text of `ex` as given (a string stays itself, any other JSON its compact text).
    var ex: String?
    var creatorId: String?

    init(name: String, ex: String? = nil, creatorId: String? = nil) {
        self.name = name
        self.ex = ex
        self.creatorId = creatorId
    }

    init(_ object: JSONObject, allowsCreator: Bool) throws(APIError) {
        guard case .string(let raw)? = object["name"] else {
            throw APIError.validationFailed.with(message: "`name` must be a string")
        }
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        // U+0000 cannot be stored in a PostgreSQL text column.
        guard !name.isEmpty, name.count <= Room.maxNameCharacters, !name.utf8.contains(0) else {
            throw APIError.validationFailed.with(
                message: "`name` must be 1 to \(Room.maxNameCharacters) characters, without U+0000 (NUL)")
        }
        var ex: String?
        switch object["ex"] {
        case nil, .null?: ex = nil
        case .string(let text)?: ex = text
        case let value?: ex = value.serializedString
        }
        if let ex, ex.utf8.count > Room.maxExBytes || ex.utf8.contains(0) {
            throw APIError.validationFailed.with(
                message: "`ex` must be at most \(Room.maxExBytes) bytes, without U+0000 (NUL)")
        }
        var creatorId: String?
        if allowsCreator {
            switch object["creatorId"] {
            case nil, .null?: creatorId = nil
            case .string(let id)? where Validation.isValidUserID(id): creatorId = id
            default:
                throw APIError.validationFailed.with(message: "`creatorId` must be a user id (1-64 of [A-Za-z0-9_.@-])")
            }
        }
        self.init(name: name, ex: ex, creatorId: creatorId)
    }
}

/// A `send` frame's data with `chatType: "room"`: `toId` is the room (a string or a number, as seed 002's room ids
/// are numbers); the rest is read as any send (`MessageService.SendRequest`).
struct RoomSendRequest: Sendable {
    var roomId: Int64
    var send: MessageService.SendRequest

    init(_ data: JSONObject) throws(APIError) {
        roomId = try RoomID.parse(data["toId"], field: "data.toId")
        guard case .string(let msgType)? = data["msgType"] else {
            throw APIError.validationFailed.with(message: "missing field `data.msgType`")
        }
        guard let content = data["content"], !content.isNull else {
            throw APIError.validationFailed.with(message: "missing field `data.content`")
        }
        var clientMsgId: String?
        switch data["clientMsgId"] {
        case nil, .null?: clientMsgId = nil
        case .string(let id)?: clientMsgId = id
        default: throw APIError.validationFailed.with(message: "wrong type for `data.clientMsgId`")
        }
        var noUnread = false
        switch data["noUnread"] {
        case nil, .null?: noUnread = false
        case .bool(let value)?: noUnread = value
        default: throw APIError.validationFailed.with(message: "wrong type for `data.noUnread`")
        }
        send = MessageService.SendRequest(
            toId: String(roomId), chatType: "room", msgType: msgType, content: content, extra: data["extra"],
            clientMsgId: clientMsgId, noUnread: noUnread)
    }
}

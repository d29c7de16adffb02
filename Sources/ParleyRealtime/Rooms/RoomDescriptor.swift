import ParleyBytes
import ParleyJSON

/// What one instance tells the others about a room (see `RelayDescriptor` for the envelope and the other kinds):
///
///   {"k":"R","a":APP,"r":ROOM,"m":MESSAGE}     a room message, inline: the receivers load nothing
///   {"k":"Ri","a":APP,"r":ROOM,"id":MSG}       a room message too large for a NOTIFY payload: receivers load it
///   {"k":"Rd","a":APP,"r":ROOM}                the room was dismissed
enum RoomDescriptor: Equatable {
    case message(RoomKey, json: [UInt8])
    case messageID(RoomKey, id: Int64)
    case dismissed(RoomKey)

    /// Inline messages larger than this travel by id (the envelope and other descriptors share the payload).
    static let maxInlineBytes = 6000

    /// The descriptor of a stored room message: inline when small enough.
    static func message(_ message: RoomMessage, json: [UInt8]) -> RoomDescriptor {
        let key = RoomKey(appId: message.appId, roomId: message.roomId)
        return json.count <= maxInlineBytes ? .message(key, json: json) : .messageID(key, id: message.id)
    }

    func serialized() -> [UInt8] {
        var out: [UInt8] = []
        func head(_ kind: String, _ key: RoomKey) {
            out.append(contentsOf: #"{"k":"#.utf8)
            JSONString.append(kind, to: &out)
            out.append(contentsOf: #","a":"#.utf8)
            DecimalASCII.append(Int(key.appId), to: &out)
            out.append(contentsOf: #","r":"#.utf8)
            DecimalASCII.append(Int(key.roomId), to: &out)
        }
        switch self {
        case .message(let key, let json):
            out.reserveCapacity(json.count + 48)
            head("R", key)
            out.append(contentsOf: #","m":"#.utf8)
            out.append(contentsOf: json)
        case .messageID(let key, let id):
            head("Ri", key)
            out.append(contentsOf: #","id":"#.utf8)
            DecimalASCII.append(Int(id), to: &out)
        case .dismissed(let key):
            head("Rd", key)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// True for the kinds this type reads (the relay hands those to the rooms).
    /// The descriptor kinds of chat rooms (the relay hands them to the room service).
    static let kinds = ["R", "Ri", "Rd"]

    /// nil for anything else or anything malformed.
    static func parse(_ object: JSONObject) -> RoomDescriptor? {
        guard case .string(let kind)? = object["k"], let appId = object["a"]?.int64Value,
            let roomId = object["r"]?.int64Value
        else { return nil }
        let key = RoomKey(appId: appId, roomId: roomId)
        switch kind {
        case "R":
            guard case .object(let message)? = object["m"] else { return nil }
            return .message(key, json: JSONValue.object(message).serialized())
        case "Ri":
            guard let id = object["id"]?.int64Value else { return nil }
            return .messageID(key, id: id)
        case "Rd":
            return .dismissed(key)
        default:
            return nil
        }
    }
}

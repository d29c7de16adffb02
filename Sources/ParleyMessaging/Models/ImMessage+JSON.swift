import Foundation
import ParleyHTTP
import ParleyJSON

/// The hot paths (a send's answer, the realtime frame of every message) write a message straight to bytes
/// instead of going through Foundation's JSONEncoder; the keys and values are the same as `encode(to:)`.
extension ImMessage {
    public func jsonBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(320)
        write(to: &out)
        return out
    }

    public func write(to out: inout [UInt8]) {
        out.append(contentsOf: #"{"chatType":"#.utf8)
        JSONString.append(chatType.rawValue, to: &out)
        out.append(contentsOf: #","clientMsgId":"#.utf8)
        JSONString.append(clientMsgId, to: &out)
        out.append(contentsOf: #","content":"#.utf8)
        content.write(to: &out)
        out.append(contentsOf: #","conversationId":"#.utf8)
        JSONString.append(conversationId, to: &out)
        out.append(contentsOf: #","createdAt":"#.utf8)
        out.append(UInt8(ascii: "\""))
        ISO8601.append(createdAt, to: &out)
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: #","editedAt":"#.utf8)
        if let editedAt {
            out.append(UInt8(ascii: "\""))
            ISO8601.append(editedAt, to: &out)
            out.append(UInt8(ascii: "\""))
        } else {
            out.append(contentsOf: "null".utf8)
        }
        out.append(contentsOf: #","extra":"#.utf8)
        (extra ?? .null).write(to: &out)
        out.append(contentsOf: #","fromId":"#.utf8)
        JSONString.append(fromId, to: &out)
        out.append(contentsOf: #","id":"#.utf8)
        JSONString.append(id, to: &out)
        out.append(contentsOf: #","msgType":"#.utf8)
        JSONString.append(msgType.rawValue, to: &out)
        out.append(contentsOf: #","revoked":"#.utf8)
        out.append(contentsOf: (revoked ? "true" : "false").utf8)
        out.append(contentsOf: #","revokedBy":"#.utf8)
        if let revokedBy { JSONString.append(revokedBy, to: &out) } else { out.append(contentsOf: "null".utf8) }
        out.append(contentsOf: #","seq":"#.utf8)
        out.append(contentsOf: String(seq).utf8)
        out.append(contentsOf: #","toId":"#.utf8)
        JSONString.append(toId, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

extension MessageService.SendRequest {
    /// Parses a send request body with ParleyJSON (no Foundation decoding on the hot path); 1001 for a body
    /// that is not JSON, 1002 naming the field for a missing or mistyped one.
    public static func parse(_ bytes: [UInt8]) throws(APIError) -> MessageService.SendRequest {
        guard !bytes.isEmpty else { throw APIError.invalidJSON.with(message: "request body is empty; expected JSON") }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw APIError.invalidJSON
        }
        guard case .object(let object) = value else {
            throw APIError.validationFailed.with(message: "request body must be a JSON object")
        }
        return try MessageService.SendRequest(object, prefix: "")
    }

    /// From an already parsed object (`prefix` names it in messages, e.g. "data." for a WebSocket frame).
    public init(_ object: JSONObject, prefix: String) throws(APIError) {
        func string(_ key: String) throws(APIError) -> String {
            switch object[key] {
            case .string(let value)?: return value
            case nil, .null?: throw APIError.validationFailed.with(message: "missing field `\(prefix)\(key)`")
            default: throw APIError.validationFailed.with(message: "wrong type for `\(prefix)\(key)`")
            }
        }
        let toId = try string("toId")
        let chatType = try string("chatType")
        let msgType = try string("msgType")
        guard let content = object["content"], !content.isNull else {
            throw APIError.validationFailed.with(message: "missing field `\(prefix)content`")
        }
        self.init(toId: toId, chatType: chatType, msgType: msgType, content: content, extra: object["extra"],
                  clientMsgId: try string("clientMsgId"))
    }
}

import Foundation
import ParleyHTTP
import ParleyJSON

extension IMMessage {
    /// The message's JSON, written once per send for the answer and the realtime frame alike, by the encoder every
    /// model goes through (content and extra as kept, as on every other path).
    public func jsonBytes() -> [UInt8] {
        // Cannot fail: no floating-point field (numbers in content are text), and dates are written without throwing.
        (try? JSONCoding.bytesEncoder.encode(self)) ?? Array("null".utf8)
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
        self.init(
            toId: toId, chatType: chatType, msgType: msgType, content: content, extra: object["extra"],
            clientMsgId: try string("clientMsgId"))
    }
}

import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyWebSocket

/// Server frames, `{"type": "...", "reqId"?: "...", "data": ...}`, encoded straight to WebSocket frames so
/// that a fan-out encodes once and sends the same bytes to every recipient.
enum ServerFrame {
    /// The JSON text of a frame whose data is already JSON bytes.
    static func text(type: String, reqId: String? = nil, data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + 48 + (reqId?.utf8.count ?? 0))
        out.append(contentsOf: #"{"type":"#.utf8)
        JSONString.append(type, to: &out)
        if let reqId {
            out.append(contentsOf: #","reqId":"#.utf8)
            JSONString.append(reqId, to: &out)
        }
        out.append(contentsOf: #","data":"#.utf8)
        out.append(contentsOf: data)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A whole WebSocket text frame (unmasked, final) ready for `send(encodedFrame:)`.
    static func encoded(type: String, reqId: String? = nil, data: [UInt8]) -> [UInt8] {
        WebSocketFrameEncoder.server.encode(opcode: .text, payload: text(type: type, reqId: reqId, data: data))
    }

    static func encoded(type: String, reqId: String? = nil, json: JSONValue) -> [UInt8] {
        encoded(type: type, reqId: reqId, data: json.serialized())
    }

    static func encoded<T: Encodable>(type: String, reqId: String? = nil, encodable: T) -> [UInt8] {
        let data = (try? JSONCoding.bytesEncoder.encode(encodable)) ?? Array("null".utf8)
        return encoded(type: type, reqId: reqId, data: data)
    }

    static func ack(reqId: String?, data: [UInt8]) -> [UInt8] { encoded(type: "ack", reqId: reqId, data: data) }

    static func ack<T: Encodable>(reqId: String?, _ value: T) -> [UInt8] {
        encoded(type: "ack", reqId: reqId, encodable: value)
    }

    /// A refusal that REST answers with `Retry-After` (a rate limit) carries the seconds as `retryAfter`.
    static func error(reqId: String?, _ error: APIError) -> [UInt8] {
        var fields: [(String, JSONValue)] = [
            ("code", .number(JSONNumber(error.code))), ("message", .string(error.message)),
        ]
        if let retryAfter = error.headers["Retry-After"].flatMap(Int.init) {
            fields.append(("retryAfter", .number(JSONNumber(retryAfter))))
        }
        if let data = error.data, let value = try? JSONValue.parse(data) { fields.append(("data", value)) }
        return encoded(type: "error", reqId: reqId, json: .object(JSONObject(fields)))
    }
}

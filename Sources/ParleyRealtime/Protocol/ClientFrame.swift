import ParleyHTTP
import ParleyJSON

/// A client's request frame: `{"type": "send", "reqId": "c-17", "data": {...}}`. Parsing is pure: a frame
/// that is not JSON, not an object, or has no string `type` is answered with an `error` frame (1001/1202)
/// and the connection stays open.
struct ClientFrame: Sendable {
    var type: String
    /// Echoed in the answer; may be absent (then the answer has none either).
    var reqId: String?
    var data: JSONObject

    static let maxReqIdBytes = 128

    static func parse(_ text: String) -> Result<ClientFrame, ParseFailure> {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            return .failure(
                ParseFailure(
                    reqId: nil, error: APIError.invalidJSON.with(message: "frame is not valid JSON: \(error.reason)")))
        }
        guard case .object(let object) = value else {
            return .failure(ParseFailure(reqId: nil, error: .malformedFrame))
        }
        var reqId: String?
        if let raw = object["reqId"] {
            switch raw {
            case .string(let id) where id.utf8.count <= maxReqIdBytes: reqId = id
            case .number(let number) where number.text.utf8.count <= maxReqIdBytes: reqId = number.text
            case .null: reqId = nil
            default:
                return .failure(
                    ParseFailure(
                        reqId: nil,
                        error: APIError.malformedFrame.with(
                            message: "`reqId` must be a string of at most \(maxReqIdBytes) bytes")))
            }
        }
        guard case .string(let type)? = object["type"] else {
            return .failure(ParseFailure(reqId: reqId, error: .malformedFrame))
        }
        let data: JSONObject
        switch object["data"] {
        case .object(let object)?: data = object
        case nil, .null?: data = JSONObject()
        default:
            return .failure(
                ParseFailure(reqId: reqId, error: APIError.malformedFrame.with(message: "`data` must be an object")))
        }
        return .success(ClientFrame(type: type, reqId: reqId, data: data))
    }

    struct ParseFailure: Error, Sendable {
        var reqId: String?
        var error: APIError
    }

    // MARK: Field access with 1002 answers

    func string(_ key: String) throws(APIError) -> String {
        guard case .string(let value)? = data[key] else {
            throw APIError.validationFailed.with(message: "`data.\(key)` must be a string")
        }
        return value
    }

    func optionalString(_ key: String) throws(APIError) -> String? {
        switch data[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw APIError.validationFailed.with(message: "`data.\(key)` must be a string")
        }
    }

    func integer(_ key: String) throws(APIError) -> Int64 {
        guard let value = data[key]?.int64Value else {
            throw APIError.validationFailed.with(message: "`data.\(key)` must be an integer")
        }
        return value
    }

    func optionalInteger(_ key: String) throws(APIError) -> Int64? {
        switch data[key] {
        case nil, .null?: return nil
        case let value?:
            guard let integer = value.int64Value else {
                throw APIError.validationFailed.with(message: "`data.\(key)` must be an integer")
            }
            return integer
        }
    }

    func value(_ key: String) throws(APIError) -> JSONValue {
        guard let value = data[key] else {
            throw APIError.validationFailed.with(message: "missing field `data.\(key)`")
        }
        return value
    }
}

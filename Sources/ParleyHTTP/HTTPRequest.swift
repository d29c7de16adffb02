import Foundation
import ParleyJSON

/// A request as handlers see it: the parsed head, the body, and where it came from.
/// A class, immutable: it passes through every middleware layer, and a reference costs one retain
/// per layer where a struct of strings and arrays costs one per field.
public final class HTTPRequest: Sendable {
    public let head: HTTPRequestHead
    public let body: RequestBody
    public let remoteAddress: String

    public init(head: HTTPRequestHead, body: RequestBody = .buffered([]), remoteAddress: String = "127.0.0.1") {
        self.head = head
        self.body = body
        self.remoteAddress = remoteAddress
    }

    public var method: HTTPMethod { head.method }
    public var path: String { head.path }
    public var headers: HTTPHeaders { head.headers }

    /// The query string's parameters, read in place (`request.query.value(for: "limit")`).
    public var query: HTTPQuery { HTTPQuery(head.query) }

    /// The buffered body bytes (empty for a streamed body).
    public var bodyBytes: [UInt8] {
        if case .buffered(let bytes) = body { return bytes }
        return []
    }

    /// The body decoded as `T`, or `empty` when there is no body (routes whose fields are all optional).
    public func decodeJSON<T: Decodable>(_ type: T.Type, ifEmpty empty: @autoclosure () -> T) throws(APIError) -> T {
        bodyBytes.isEmpty ? empty() : try decodeJSON(type)
    }

    /// Decodes the JSON body, answering `invalidJSON` / `validationFailed` with the decoder's reason.
    public func decodeJSON<T: Decodable>(_ type: T.Type) throws(APIError) -> T {
        let bytes = bodyBytes
        guard !bytes.isEmpty else { throw APIError.invalidJSON.with(message: "request body is empty; expected JSON") }
        do {
            return try JSONCoding.decoder.decode(T.self, from: Data(bytes))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            // Not JSON at all (as opposed to JSON of the wrong shape).
            throw APIError.invalidJSON
        } catch let error as DecodingError {
            throw APIError.validationFailed.with(message: DecodingErrorText.describe(error))
        } catch {
            throw APIError.invalidJSON
        }
    }

    /// The JSON body as an object, parsed with ParleyJSON (no Foundation decoding on the hot path).
    public func jsonObject() throws(APIError) -> JSONObject { try Self.jsonObject(bodyBytes) }

    /// `bytes` as a JSON object: 1001 when they are not JSON (or empty), 1002 when they are not an object.
    public static func jsonObject(_ bytes: [UInt8]) throws(APIError) -> JSONObject {
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
        return object
    }
}

/// A request body: buffered whole (the default, bounded by the route's limit), or streamed for routes
/// that take large uploads.
public enum RequestBody: Sendable {
    case buffered([UInt8])
    case stream(RequestBodyStream)
}

/// Percent-decoding (RFC 3986 §2.1); nil for malformed escapes or invalid UTF-8.
public enum PercentDecoding {
    public static func decode<S: StringProtocol>(_ text: S, plusAsSpace: Bool = false) -> String? {
        // Most paths and parameters carry no escape: nothing to decode, nothing to allocate beyond the result.
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusAsSpace && $0 == UInt8(ascii: "+")) }) {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else if plusAsSpace && byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The value of one hexadecimal digit (either case); nil for anything else.
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Short, client-safe text for a JSON decoding failure ("missing field `name`").
enum DecodingErrorText {
    static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let joined = codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return joined.isEmpty ? "body" : joined
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field `\(path(context.codingPath + [key]))`"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong type for `\(path(context.codingPath))`"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "request body is not valid JSON" : "invalid value for `\(path(context.codingPath))`"
        @unknown default:
            return "invalid request body"
        }
    }
}

import ParleyCrypto
import ParleyHTTP

/// The opening handshake, server side (RFC 6455 §4.2): checks the client's request and builds the 101.
public enum WebSocketHandshake {
    /// §1.3: appended to the client's key before hashing.
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for a key: base64(SHA-1(key + GUID)) (§4.2.2 step 5.4).
    public static func acceptValue(forKey key: String) -> String {
        Base64.encode(SHA1.hash(Array((key + guid).utf8)))
    }

    /// What a valid request asked for.
    public struct Request: Sendable, Hashable {
        /// The `Sec-WebSocket-Key` as sent (trimmed).
        public var key: String
        /// Offered subprotocols in the client's order of preference.
        public var offeredSubprotocols: [String]
    }

    /// Checks the request against §4.2.1. Failures are answered before any upgrade:
    /// - not GET, not HTTP/1.1, no `Connection: Upgrade`, a missing or malformed `Sec-WebSocket-Key`
    ///   (not base64 of 16 bytes, or sent twice) -> 400, code 1200;
    /// - no `Upgrade: websocket` -> 426 with `Upgrade: websocket` (RFC 9110 §15.5.22: the resource needs it);
    /// - `Sec-WebSocket-Version` missing or not 13 -> 426 with `Sec-WebSocket-Version: 13` (§4.2.2).
    public static func validate(_ head: HTTPRequestHead) throws(APIError) -> Request {
        guard head.method == .GET else { throw APIError.webSocketHandshakeInvalid("the method must be GET") }
        guard head.version == .http1_1 else { throw APIError.webSocketHandshakeInvalid("HTTP/1.1 is required") }
        let headers = head.headers
        guard headers.containsToken("websocket", in: "upgrade") else {
            throw APIError.webSocketUpgradeRequired("this resource needs `Upgrade: websocket`")
        }
        guard headers.containsToken("upgrade", in: "connection") else {
            throw APIError.webSocketHandshakeInvalid("`Connection` must include `Upgrade`")
        }
        let versions = headers.values(for: "sec-websocket-version")
        guard versions.count == 1, trimmed(versions[0]) == "13" else {
            throw APIError.webSocketUpgradeRequired(
                versions.isEmpty
                    ? "missing `Sec-WebSocket-Version`"
                    : "unsupported `Sec-WebSocket-Version`; 13 is supported")
        }
        let keys = headers.values(for: "sec-websocket-key")
        guard keys.count == 1 else {
            throw APIError.webSocketHandshakeInvalid(
                keys.isEmpty
                    ? "missing `Sec-WebSocket-Key`"
                    : "more than one `Sec-WebSocket-Key`")
        }
        let key = trimmed(keys[0])
        // §4.1: a random 16-byte value, base64-encoded (24 characters).
        guard key.utf8.count == 24, let decoded = Base64.decode(key), decoded.count == 16 else {
            throw APIError.webSocketHandshakeInvalid("`Sec-WebSocket-Key` must be base64 of 16 bytes")
        }
        var offered: [String] = []
        for value in headers.values(for: "sec-websocket-protocol") {
            for token in value.split(separator: ",") {
                let name = trimmed(String(token))
                if !name.isEmpty { offered.append(name) }
            }
        }
        return Request(key: key, offeredSubprotocols: offered)
    }

    /// The 101 answer (§4.2.2 step 5): `Upgrade: websocket`, `Sec-WebSocket-Accept`, and the chosen
    /// subprotocol if any. The serializer adds `Connection: Upgrade`. No extension is accepted.
    public static func response(for request: Request, subprotocol: String?, upgrade: HTTPUpgrade) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Upgrade", value: "websocket")
        headers.add(name: "Sec-WebSocket-Accept", value: acceptValue(forKey: request.key))
        if let subprotocol { headers.add(name: "Sec-WebSocket-Protocol", value: subprotocol) }
        return HTTPResponse(status: 101, headers: headers, upgrade: upgrade)
    }

    private static func trimmed(_ value: String) -> String {
        var scalars = Substring(value)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}

extension APIError {
    /// 1200 (400): the request is not a valid WebSocket opening handshake.
    public static func webSocketHandshakeInvalid(_ detail: String) -> APIError {
        APIError(code: 1200, status: 400, message: "invalid WebSocket handshake: \(detail)")
    }

    /// 1201 (426): a WebSocket upgrade (version 13) is required.
    public static func webSocketUpgradeRequired(_ detail: String) -> APIError {
        APIError(
            code: 1201, status: 426, message: "WebSocket upgrade required: \(detail)",
            headers: ["Upgrade": "websocket", "Sec-WebSocket-Version": "13"])
    }
}

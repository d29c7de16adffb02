import ParleyCrypto

/// The opening handshake, client side (RFC 6455 §4.1): the request to send and the checks on the answer.
/// Pure, so an event-loop client (a benchmark holding thousands of sockets) can reuse it.
public struct WebSocketClientHandshake: Sendable {
    /// The `Sec-WebSocket-Key`: 16 random bytes, base64-encoded, fresh per connection (§4.1).
    public let key: String

    public init(key: String = Base64.encode(SecureRandom.bytes(16))) {
        self.key = key
    }

    /// The upgrade request. `extraHeaders` go after the required ones (e.g. `Authorization`).
    public func request(host: String, path: String, extraHeaders: [(String, String)] = []) -> [UInt8] {
        var text = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        for (name, value) in extraHeaders { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// A parsed response head.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [(name: String, value: String)]

        /// The first value of a header, names compared case-insensitively.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// Parses a response head (without the final CRLF CRLF); nil when it is malformed.
    public static func parseResponseHead(_ bytes: ArraySlice<UInt8>) -> Response? {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).makeIterator()
        guard let statusLine = lines.next() else { return nil }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else { return nil }
        var headers: [(name: String, value: String)] = []
        while let line = lines.next() {
            if line.isEmpty { continue }
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            headers.append((name, String(value.reversed().drop { $0 == " " || $0 == "\t" }.reversed())))
        }
        return Response(status: status, headers: headers)
    }

    /// Checks a 101 answer (§4.1, the client's steps 1-4 after the response).
    public func validate(_ response: Response) throws(WebSocketClientError) {
        guard response.status == 101 else {
            throw WebSocketClientError(
                .handshakeRejected(status: response.status),
                "the server answered \(response.status) instead of 101")
        }
        guard let upgrade = response.header("upgrade"), upgrade.lowercased() == "websocket" else {
            throw WebSocketClientError(.handshakeInvalid, "missing `Upgrade: websocket` in the 101")
        }
        let connectionTokens = (response.header("connection") ?? "").lowercased().split(separator: ",")
            .map { $0.filter { $0 != " " && $0 != "\t" } }
        guard connectionTokens.contains("upgrade") else {
            throw WebSocketClientError(.handshakeInvalid, "missing `Connection: Upgrade` in the 101")
        }
        guard response.header("sec-websocket-accept") == WebSocketHandshake.acceptValue(forKey: key) else {
            throw WebSocketClientError(.handshakeInvalid, "wrong `Sec-WebSocket-Accept`")
        }
        if response.header("sec-websocket-extensions") != nil {
            throw WebSocketClientError(.handshakeInvalid, "the server accepted an extension we did not offer")
        }
    }
}

/// Why a ``WebSocketClient`` call failed.
public struct WebSocketClientError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// Socket creation, connect, send or receive failed.
        case io
        /// The server answered the handshake with another status (body in `body`).
        case handshakeRejected(status: Int)
        /// A 101 that breaks RFC 6455 §4.1.
        case handshakeInvalid
        /// Nothing arrived before the deadline.
        case timeout
        /// The TCP connection ended without a Close frame.
        case connectionClosed
        /// The server sent a Close frame (while a message was awaited).
        case closed(code: WebSocketCloseCode?, reason: String)
        /// The server broke the protocol; we sent a Close with this code.
        case protocolError(WebSocketCloseCode)
    }

    public var kind: Kind
    public var message: String
    /// The body of a rejected handshake (the error envelope).
    public var body: [UInt8] = []

    public init(_ kind: Kind, _ message: String, body: [UInt8] = []) {
        self.kind = kind
        self.message = message
        self.body = body
    }

    public var description: String { "WebSocketClientError(\(kind)): \(message)" }
}

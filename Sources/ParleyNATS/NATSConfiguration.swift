/// One NATS server to connect to, with the credentials its URL carried.
public struct NATSServerURL: Sendable, Hashable {
    /// A host name, an IPv4 address or an IPv6 address (without brackets).
    public var host: String
    public var port: UInt16
    /// `nats://user:pass@host`: sent as `user` / `pass` in CONNECT.
    public var user: String?
    public var password: String?
    /// `nats://token@host`: sent as `auth_token` in CONNECT.
    public var token: String?

    public init(host: String, port: UInt16 = 4222, user: String? = nil, password: String? = nil, token: String? = nil) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.token = token
    }

    /// `host:port`, with brackets around an IPv6 address; never the credentials.
    public var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

extension NATSServerURL: CustomStringConvertible, CustomDebugStringConvertible {
    /// The URL with its credentials redacted, for logs.
    public var description: String {
        let credentials = user != nil || password != nil || token != nil ? "<redacted>@" : ""
        return "nats://\(credentials)\(address)"
    }

    public var debugDescription: String { description }
}

/// A `nats://` URL list that could not be read. Says what is wrong, never the credentials.
public struct NATSConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { "invalid NATS server list: \(message)" }
}

/// How a `NATSClient` connects, pings, reconnects and buffers.
public struct NATSConfiguration: Sendable {
    /// Tried in order, then round robin after every failure or loss.
    public var servers: [NATSServerURL]
    /// The connection's name in the server's monitoring (`name` in CONNECT).
    public var name: String = "parley"
    /// Whether the server sends this connection the messages it published itself.
    public var echo: Bool = true
    /// Ask for headers (HMSG); off unless a caller uses them.
    public var headers: Bool = false
    /// A PING after this long; the connection is stale after `maxOutstandingPings` of them go unanswered.
    public var pingInterval: Duration = .seconds(30)
    public var maxOutstandingPings: Int = 2
    /// The wait before a reconnection attempt doubles from `reconnectBackoffMin` to `reconnectBackoffMax` with
    /// every failed attempt (plus up to half again of jitter), and starts over once a connection is confirmed.
    public var reconnectBackoffMin: Duration = .milliseconds(50)
    public var reconnectBackoffMax: Duration = .seconds(1)
    /// Publishes accepted while disconnected, encoded, up to this many bytes; beyond it they are dropped.
    public var pendingBufferBytes: Int = 8 << 20
    /// Publishes are refused while the unsent output is at least this large (flow control).
    public var writeHighWaterMark: Int = 4 << 20
    /// TCP connect, INFO, CONNECT and the confirming PONG together.
    public var connectTimeout: Duration = .seconds(2)
    /// How long `close()` waits for the server to confirm the drain before it closes anyway.
    public var drainTimeout: Duration = .seconds(5)
    /// The largest message accepted from any server, whatever its INFO announces.
    public var maxPayloadCeiling: Int = 64 << 20

    public init(servers: [NATSServerURL]) {
        self.servers = servers
    }

    /// Reads `nats://[user:pass@|token@]host[:port][,nats://...]` (port 4222 when left out).
    public init(urls: String) throws(NATSConfigurationError) {
        self.init(servers: try Self.parseServers(urls))
    }

    /// The servers of a comma-separated `nats://` URL list.
    public static func parseServers(_ list: String) throws(NATSConfigurationError) -> [NATSServerURL] {
        var servers: [NATSServerURL] = []
        for (index, entry) in list.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let text = entry.trimmingWhitespace()
            if text.isEmpty { throw NATSConfigurationError("entry \(index + 1) is empty") }
            do {
                servers.append(try parseServer(text))
            } catch {
                throw NATSConfigurationError("entry \(index + 1): \(error.message)")
            }
        }
        return servers
    }

    static func parseServer(_ text: Substring) throws(NATSConfigurationError) -> NATSServerURL {
        guard let schemeEnd = text.firstRange(of: "://") else {
            throw NATSConfigurationError("expected nats://host:port")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "nats" else {
            throw NATSConfigurationError("scheme \(scheme.isEmpty ? "(none)" : scheme) is not supported (nats:// only)")
        }
        var authority = text[schemeEnd.upperBound...]
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        if authority.contains("/") || authority.contains("?") || authority.contains("#") {
            throw NATSConfigurationError("a NATS URL has no path or query")
        }
        var server = NATSServerURL(host: "")
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                let user = try percentDecoded(userInfo[..<colon])
                if user.isEmpty { throw NATSConfigurationError("empty user name") }
                server.user = user
                server.password = try percentDecoded(userInfo[userInfo.index(after: colon)...])
            } else {
                let token = try percentDecoded(userInfo)
                if token.isEmpty { throw NATSConfigurationError("empty token") }
                server.token = token
            }
        }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw NATSConfigurationError("unclosed [ in the host")
            }
            server.host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw NATSConfigurationError("unexpected text after the host") }
                portText = rest.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            server.host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            server.host = String(authority)
        }
        if server.host.isEmpty { throw NATSConfigurationError("missing host") }
        if server.host.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw NATSConfigurationError("the host contains spaces or control characters")
        }
        if let portText {
            guard !portText.isEmpty, portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let port = Int(portText), port >= 1 && port <= 65535
            else { throw NATSConfigurationError("the port must be a number from 1 to 65535") }
            server.port = UInt16(port)
        }
        return server
    }

    /// `%XX` escapes decoded (RFC 3986 §2.1), so credentials may hold `@`, `:` or `,`.
    static func percentDecoded(_ text: Substring) throws(NATSConfigurationError) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw NATSConfigurationError("a % in the credentials is not followed by two hex digits")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw NATSConfigurationError("the credentials are not UTF-8")
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension NATSConfiguration: CustomStringConvertible, CustomDebugStringConvertible {
    /// The settings with every credential redacted.
    public var description: String {
        "NATSConfiguration(servers: \(servers.map(\.description)), name: \(name), pingInterval: \(pingInterval), "
            + "maxOutstandingPings: \(maxOutstandingPings), reconnectBackoff: \(reconnectBackoffMin)..."
            + "\(reconnectBackoffMax), pendingBufferBytes: \(pendingBufferBytes), writeHighWaterMark: "
            + "\(writeHighWaterMark), connectTimeout: \(connectTimeout))"
    }

    public var debugDescription: String { description }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var result = self
        while let first = result.first, first.isWhitespace { result.removeFirst() }
        while let last = result.last, last.isWhitespace { result.removeLast() }
        return result
    }
}

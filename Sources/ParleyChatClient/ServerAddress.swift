import Glibc

/// Where the Parley server is: `http://HOST:PORT` (REST under it, the WebSocket at `/ws`).
///
/// Plain HTTP only: the WebSocket client of this package (`WebSocketClient`) has no TLS. Reach a remote server
/// through an SSH tunnel, or run `parley chat` on a host that sees the server's plain port.
public struct ServerAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    /// Parses `http://host[:port][/]` (port 80 when absent); a bare `host:port` means http.
    public init(parsing text: String) throws(ChatUsageError) {
        var rest = Substring(text)
        if rest.hasPrefix("https://") || rest.hasPrefix("wss://") {
            throw ChatUsageError(
                "\(text): parley chat speaks plain http:// only (its WebSocket client has no TLS); "
                    + "use the server's plain port, e.g. through an SSH tunnel")
        }
        for scheme in ["http://", "ws://"] where rest.hasPrefix(scheme) { rest = rest.dropFirst(scheme.count) }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/") else {
            throw ChatUsageError("\(text): expected http://HOST:PORT (no path)")
        }
        if let colon = rest.lastIndex(of: ":") {
            guard let port = UInt16(rest[rest.index(after: colon)...]), port > 0 else {
                throw ChatUsageError("\(text): the port must be a number from 1 to 65535")
            }
            host = String(rest[..<colon])
            self.port = port
        } else {
            host = String(rest)
            port = 80
        }
        guard !host.isEmpty, !host.contains("[") else {
            throw ChatUsageError("\(text): expected an IPv4 address or a host name")
        }
    }

    /// `http://host:port`, the prefix of every REST URL.
    public var baseURL: String { "http://\(host):\(port)" }

    public var description: String { baseURL }

    /// The host's first IPv4 address (the WebSocket client connects to addresses, not names). Blocking: call it
    /// off the cooperative pool.
    func resolveIPv4() throws(IMConnectionError) -> String {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host == "localhost" ? "127.0.0.1" : host, nil, &hints, &result)
        guard status == 0, let first = result, let address = first.pointee.ai_addr else {
            throw IMConnectionError.unreachable("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(result) }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
            var raw = ipv4.pointee.sin_addr
            _ = inet_ntop(AF_INET, &raw, &text, socklen_t(INET_ADDRSTRLEN))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

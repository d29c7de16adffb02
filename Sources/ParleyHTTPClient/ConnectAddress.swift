/// The IP address a request is about to connect to, as `HTTPClientRequest.connectPolicy` sees it: after name
/// resolution, for each address curl tries, so what is checked is what is connected to (a name that resolved to a
/// public address when a URL was configured and to a private one now is caught).
public struct ConnectAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), in network order.
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) {
        precondition(bytes.count == 4 || bytes.count == 16, "an IP address has 4 or 16 bytes")
        self.bytes = bytes
    }

    public var isIPv4: Bool { bytes.count == 4 }

    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }
}

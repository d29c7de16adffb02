/// Where a connection goes: the server's IPv4 address and the `Host` header its handshake names. The cluster mode
/// spreads connections over several instances, so each connection carries its own.
struct ServerEndpoint: Sendable {
    let address: IPv4Address
    let hostHeader: String

    init(host: String, port: UInt16) throws(BenchError) {
        guard let address = IPv4Address(host: host, port: port) else {
            throw BenchError("not an IPv4 address: \(host)")
        }
        self.address = address
        hostHeader = "\(host):\(port)"
    }
}

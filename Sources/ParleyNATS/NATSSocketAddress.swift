import Foundation
import Glibc

/// A resolved server address, ready for `connect`.
struct NATSSocketAddress: @unchecked Sendable {
    var storage = sockaddr_storage()
    var length: socklen_t = 0

    var family: Int32 { Int32(storage.ss_family) }

    /// The address of a numeric host (IPv4, IPv6, or `localhost`), with no lookup; nil for a name.
    static func numeric(host: String, port: UInt16) -> NATSSocketAddress? {
        var address = NATSSocketAddress()
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, name, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            withUnsafeBytes(of: v4) { source in
                withUnsafeMutableBytes(of: &address.storage) { $0.copyMemory(from: source) }
            }
            address.length = socklen_t(MemoryLayout<sockaddr_in>.size)
            return address
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, name, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            withUnsafeBytes(of: v6) { source in
                withUnsafeMutableBytes(of: &address.storage) { $0.copyMemory(from: source) }
            }
            address.length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            return address
        }
        return nil
    }

    /// Resolves `host` on a helper thread (`getaddrinfo` blocks, and the loop must not) and calls `completion`
    /// there with the first address, or the resolver's error text.
    static func resolve(
        host: String, port: UInt16, _ completion: @escaping @Sendable (Result<NATSSocketAddress, NATSError>) -> Void
    ) {
        Thread.detachNewThread {
            completion(lookup(host: host, port: port))
        }
    }

    private static func lookup(host: String, port: UInt16) -> Result<NATSSocketAddress, NATSError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            return .failure(.connectFailed("could not resolve \(host): \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(first) }
        var address = NATSSocketAddress()
        let length = Int(first.pointee.ai_addrlen)
        guard let source = first.pointee.ai_addr, length <= MemoryLayout<sockaddr_storage>.size else {
            return .failure(.connectFailed("could not resolve \(host): no usable address"))
        }
        withUnsafeMutableBytes(of: &address.storage) {
            $0.copyMemory(from: UnsafeRawBufferPointer(start: source, count: length))
        }
        address.length = socklen_t(length)
        return .success(address)
    }
}

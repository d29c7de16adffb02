import Foundation
import Glibc

/// Which peers may tell us the client's address (`PARLEY_TRUSTED_PROXIES`: IPs and CIDRs, IPv4 or IPv6).
/// The client address is the socket peer, unless the peer is trusted: then it is the right-most address in
/// `X-Forwarded-For` that is not itself a trusted proxy (entries left of it could be forged by the client).
public struct TrustedProxies: Sendable {
    struct Network: Sendable, Hashable {
        let address: [UInt8] // 4 or 16 bytes
        let prefixLength: Int

        func contains(_ candidate: [UInt8]) -> Bool {
            guard candidate.count == address.count else { return false }
            var remaining = prefixLength
            for index in 0..<address.count where remaining > 0 {
                let bits = min(8, remaining)
                let mask: UInt8 = bits == 8 ? 0xFF : ~(0xFF >> UInt8(bits))
                if candidate[index] & mask != address[index] & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    let networks: [Network]

    public static let none = TrustedProxies(networks: [])

    init(networks: [Network]) {
        self.networks = networks
    }

    /// `10.0.0.0/8, 192.168.1.10, ::1, fd00::/8`.
    public init(parsing text: String) throws(Invalid) {
        var networks: [Network] = []
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            let parts = entry.split(separator: "/", maxSplits: 1).map(String.init)
            guard let address = Self.parseAddress(parts[0]) else {
                throw Invalid(description: "PARLEY_TRUSTED_PROXIES: `\(entry)` is not an IP address or CIDR")
            }
            let maxPrefix = address.count * 8
            var prefix = maxPrefix
            if parts.count == 2 {
                guard let parsed = Int(parts[1]), (0...maxPrefix).contains(parsed) else {
                    throw Invalid(description: "PARLEY_TRUSTED_PROXIES: bad prefix length in `\(entry)`")
                }
                prefix = parsed
            }
            networks.append(Network(address: address, prefixLength: prefix))
        }
        self.networks = networks
    }

    public var isEmpty: Bool { networks.isEmpty }

    public func isTrusted(_ address: String) -> Bool {
        guard !networks.isEmpty, let bytes = Self.parseAddress(address) else { return false }
        return networks.contains { $0.contains(bytes) }
    }

    /// The client address for a request from `peer` carrying these `X-Forwarded-For` header values.
    public func clientAddress(peer: String, forwardedFor: [String]) -> String {
        guard isTrusted(peer) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        for hop in hops.reversed() {
            guard Self.parseAddress(hop) != nil else { return peer } // garbage: do not trust the header at all
            if !isTrusted(hop) { return hop }
        }
        return hops.first ?? peer
    }

    /// The key a client address is rate-limited under: IPv4 addresses as they are, IPv6 ones by their /64 (one
    /// subscriber's whole allocation: hopping between its addresses must not multiply the budget).
    public static func rateLimitKey(for address: String) -> String {
        guard let bytes = parseAddress(address), bytes.count == 16 else { return address }
        var key = ""
        for index in stride(from: 0, to: 8, by: 2) {
            key += String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16) + ":"
        }
        return key + ":/64"
    }

    static func parseAddress(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            // IPv4-mapped (::ffff:a.b.c.d) compares as IPv4, as dual-stack sockets report it.
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                return Array(bytes[12...])
            }
            return bytes
        }
        return nil
    }
}

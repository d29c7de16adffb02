import Foundation
import Glibc
import ParleyHTTPClient

/// A webhook URL: `http://` or `https://`, a host, an optional port, a path and query sent as given. The request
/// target (path and query) is what the signature covers, as for inbound signed requests.
public struct WebhookURL: Sendable, Equatable {
    public let url: String
    public let host: String
    /// The path and query, "/" when the URL has none: PATH_WITH_QUERY of `RequestSignature`.
    public let target: String

    public init(_ text: String) throws(WebhookSettingsError) {
        let lowered = text.lowercased()
        let rest: Substring
        if lowered.hasPrefix("https://") {
            rest = text.dropFirst(8)
        } else if lowered.hasPrefix("http://") {
            rest = text.dropFirst(7)
        } else {
            throw WebhookSettingsError(description: "the webhook URL must start with http:// or https://")
        }
        guard text.utf8.count <= 2048,
            text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") })
        else {
            throw WebhookSettingsError(
                description: "the webhook URL must be at most 2048 printable ASCII characters, no spaces or fragment")
        }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@") else {
            throw WebhookSettingsError(description: "the webhook URL must not carry credentials")
        }
        var host: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw WebhookSettingsError(description: "the webhook URL's IPv6 host lacks its closing ]")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || (after.hasPrefix(":") && Self.isPort(after.dropFirst())) else {
                throw WebhookSettingsError(description: "the webhook URL's port is not a number")
            }
        } else {
            let parts = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            if parts.count == 2, !Self.isPort(parts[1]) {
                throw WebhookSettingsError(description: "the webhook URL's port is not a number")
            }
        }
        guard !host.isEmpty else { throw WebhookSettingsError(description: "the webhook URL has no host") }
        self.url = text
        self.host = String(host)
        let path = rest[authorityEnd...]
        self.target = path.hasPrefix("/") ? String(path) : "/" + path
    }

    private static func isPort(_ text: Substring) -> Bool {
        guard let port = Int(text), (1...65535).contains(port) else { return false }
        return text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// Every address the host resolves to now (an IP literal is itself); throws when it resolves to none.
    public func resolve() throws(WebhookSettingsError) -> [ConnectAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let list else {
            throw WebhookSettingsError(
                description: "the webhook URL's host \(host) does not resolve: \(String(cString: gai_strerror(status)))"
            )
        }
        defer { freeaddrinfo(list) }
        var addresses: [ConnectAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = list
        while let current = node {
            if let raw = current.pointee.ai_addr {
                if current.pointee.ai_family == AF_INET {
                    raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                        withUnsafeBytes(of: v4.pointee.sin_addr) { addresses.append(ConnectAddress(bytes: Array($0))) }
                    }
                } else if current.pointee.ai_family == AF_INET6 {
                    raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                        withUnsafeBytes(of: v6.pointee.sin6_addr) { addresses.append(ConnectAddress(bytes: Array($0))) }
                    }
                }
            }
            node = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw WebhookSettingsError(description: "the webhook URL's host \(host) has no IP address")
        }
        return Array(Set(addresses)).sorted { $0.description < $1.description }
    }

    /// Refuses the URL when its host resolves to any address `policy` does not allow.
    public func check(_ policy: WebhookAddressPolicy) throws(WebhookSettingsError) {
        let refused = try resolve().filter { !policy.allows($0) }
        guard refused.isEmpty else {
            throw WebhookSettingsError(
                description: "the webhook URL's host \(host) resolves to a loopback, private or link-local address ("
                    + refused.map(\.description).joined(separator: ", ")
                    + "); set PARLEY_WEBHOOK_ALLOW_PRIVATE=1 to allow it")
        }
    }
}

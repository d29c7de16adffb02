import ParleyHTTPClient

/// Which addresses a webhook may reach: public unicast only, unless the operator allows private ones
/// (`PARLEY_WEBHOOK_ALLOW_PRIVATE=1`). Otherwise an app's backend URL could make the server call its own
/// loopback services, the cloud's metadata endpoint (169.254.169.254) or the private network behind it. Checked
/// when a URL is configured (every address its name resolves to) and again on every new connection (the address
/// actually connected to, so a name that resolves elsewhere later does not get around it).
public struct WebhookAddressPolicy: Sendable, Equatable {
    public var allowPrivate: Bool

    public init(allowPrivate: Bool) { self.allowPrivate = allowPrivate }

    public func allows(_ address: ConnectAddress) -> Bool {
        allowPrivate || Self.isPublic(address.bytes)
    }

    /// Whether `bytes` (4 or 16) is a public unicast address: not unspecified, loopback, private (RFC 1918,
    /// fc00::/7), shared (100.64.0.0/10), link-local, multicast or reserved. IPv6 forms that carry an IPv4 address
    /// (mapped, compatible, NAT64) are judged by that address.
    public static func isPublic(_ bytes: [UInt8]) -> Bool {
        if bytes.count == 4 { return isPublicIPv4(bytes[0], bytes[1], bytes[2], bytes[3]) }
        guard bytes.count == 16 else { return false }
        let prefix12 = bytes[0..<12]
        // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible; :: and ::1 fall in here too, and are refused).
        if prefix12.elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF])
            || prefix12.allSatisfy({ $0 == 0 })
        {
            return isPublicIPv4(bytes[12], bytes[13], bytes[14], bytes[15])
        }
        // 64:ff9b::/96, the well-known NAT64 prefix (RFC 6052).
        if prefix12.elementsEqual([0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]) {
            return isPublicIPv4(bytes[12], bytes[13], bytes[14], bytes[15])
        }
        let first = bytes[0]
        if first & 0xFE == 0xFC { return false } // fc00::/7 unique local
        if first == 0xFE && bytes[1] & 0xC0 == 0x80 { return false } // fe80::/10 link-local
        if first == 0xFE && bytes[1] & 0xC0 == 0xC0 { return false } // fec0::/10 site-local (deprecated)
        if first == 0xFF { return false } // multicast
        return true
    }

    static func isPublicIPv4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> Bool {
        switch a {
        case 0, 10, 127: return false // "this network" (0.0.0.0 included), RFC 1918, loopback
        case 100 where b & 0xC0 == 64: return false // 100.64.0.0/10 shared address space (carrier NAT)
        case 169 where b == 254: return false // link-local (cloud metadata endpoints)
        case 172 where b & 0xF0 == 16: return false // 172.16.0.0/12
        case 192 where b == 168: return false // 192.168.0.0/16
        case 192 where b == 0 && c == 0: return false // 192.0.0.0/24 protocol assignments
        case 198 where b & 0xFE == 18: return false // 198.18.0.0/15 benchmarking
        case 224...255: return false // multicast, reserved, broadcast
        default: return true
        }
    }
}

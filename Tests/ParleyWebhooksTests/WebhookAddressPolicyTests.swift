import Foundation
import ParleyHTTPClient
import Testing

@testable import ParleyWebhooks

@Suite struct WebhookAddressPolicyTests {
    static func v4(_ text: String) -> ConnectAddress {
        ConnectAddress(bytes: text.split(separator: ".").map { UInt8($0)! })
    }

    /// Parses the full (non-abbreviated, or `::`-abbreviated) IPv6 text form used below.
    static func v6(_ text: String) -> ConnectAddress {
        let halves = text.components(separatedBy: "::")
        func groups(_ part: String) -> [UInt16] {
            part.isEmpty ? [] : part.split(separator: ":").map { UInt16($0, radix: 16)! }
        }
        var all = groups(halves[0])
        if halves.count == 2 {
            let tail = groups(halves[1])
            all += Array(repeating: 0, count: 8 - all.count - tail.count) + tail
        }
        return ConnectAddress(bytes: all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })
    }

    static let refused = WebhookAddressPolicy(allowPrivate: false)

    @Test(arguments: [
        "0.0.0.0", "0.1.2.3", "127.0.0.1", "127.255.255.254", "10.0.0.1", "10.255.255.255", "172.16.0.1",
        "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "100.127.255.255", "224.0.0.1",
        "255.255.255.255", "240.0.0.1", "198.18.0.1", "192.0.0.8",
    ])
    func refusesNonPublicIPv4(_ address: String) {
        #expect(!Self.refused.allows(Self.v4(address)))
    }

    @Test(arguments: [
        "8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1", "169.253.0.1",
        "192.169.0.1", "11.0.0.1", "93.184.216.34",
    ])
    func allowsPublicIPv4(_ address: String) {
        #expect(Self.refused.allows(Self.v4(address)))
    }

    @Test(arguments: [
        "::", "::1", "fc00::1", "fd12:3456::1", "fe80::1", "febf::1", "fec0::1", "ff02::1",
        // IPv4-mapped, -compatible and NAT64 forms of private addresses.
        "::ffff:7f00:1", "::ffff:a00:1", "::ffff:a9fe:a9fe", "::7f00:1", "64:ff9b::a00:1", "::ffff:0:0",
    ])
    func refusesNonPublicIPv6(_ address: String) {
        #expect(!Self.refused.allows(Self.v6(address)))
    }

    @Test(arguments: ["2001:4860:4860::8888", "2606:4700::1111", "::ffff:808:808", "64:ff9b::808:808"])
    func allowsPublicIPv6(_ address: String) {
        #expect(Self.refused.allows(Self.v6(address)))
    }

    @Test func operatorMayAllowPrivateAddresses() {
        let open = WebhookAddressPolicy(allowPrivate: true)
        #expect(open.allows(Self.v4("127.0.0.1")))
        #expect(open.allows(Self.v6("::1")))
    }

    @Test func configuredURLResolvingToLoopbackIsRefusedUnlessAllowed() throws {
        let url = try WebhookURL("http://localhost:9/hook")
        #expect(throws: WebhookSettingsError.self) { try url.check(Self.refused) }
        try url.check(WebhookAddressPolicy(allowPrivate: true))
        #expect(throws: WebhookSettingsError.self) { try WebhookURL("http://169.254.169.254/").check(Self.refused) }
        #expect(throws: WebhookSettingsError.self) { try WebhookURL("http://[::1]:8080/").check(Self.refused) }
    }
}

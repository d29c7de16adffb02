import CLibPQ
import Foundation
import Glibc
import ParleyNet
import Synchronization

/// Resolves the server's host names away from the event loop.
///
/// Given a host *name*, `PQconnectStart` calls `getaddrinfo` itself, synchronously, which can block the
/// event loop for as long as DNS takes. libpq's documented way out is `hostaddr`: when it is set, libpq
/// makes no DNS query and still uses `host` for TLS verification and authentication. So each name is
/// resolved on a helper thread, every address becomes one `host`/`hostaddr` pair (libpq tries the pairs
/// in order, as it would have tried the addresses), and the answer is cached briefly so that an outage
/// does not start a lookup per request.
final class HostResolver: Sendable {
    /// Extra keywords for `PQconnectStartParams`, placed after the connection string so they override it.
    typealias Overrides = [(keyword: String, value: String)]

    private struct Plan: Sendable {
        let hosts: [String]
        let ports: [String]?
    }

    private let plan: Plan?
    private let cache = Mutex<(expires: Instant, result: Result<[HostAddressPair], PostgresError>)?>(nil)
    private static let positiveTTL: Duration = .seconds(10)
    private static let negativeTTL: Duration = .seconds(1)

    struct HostAddressPair: Sendable, Hashable {
        let host: String
        let address: String
        let port: String?
    }

    /// Nil plan when libpq needs no DNS: IP addresses, Unix-socket directories, or `hostaddr` given.
    init(conninfo: String) {
        var host: String?
        var hostaddr: String?
        var port: String?
        var errorMessage: UnsafeMutablePointer<CChar>?
        if let options = PQconninfoParse(conninfo, &errorMessage) {
            var option = options
            while let keyword = option.pointee.keyword {
                let value = option.pointee.val.map { String(cString: $0) }
                switch String(cString: keyword) {
                case "host": host = value
                case "hostaddr": hostaddr = value
                case "port": port = value
                default: break
                }
                option += 1
            }
            PQconninfoFree(options)
        }
        if let errorMessage { PQfreemem(errorMessage) }
        // Like libpq: without `host` in the string, PGHOST applies.
        if host == nil || host?.isEmpty == true, let env = getenv("PGHOST") { host = String(cString: env) }
        if port == nil || port?.isEmpty == true, let env = getenv("PGPORT") { port = String(cString: env) }
        if hostaddr == nil || hostaddr?.isEmpty == true, let env = getenv("PGHOSTADDR") {
            hostaddr = String(cString: env)
        }
        guard hostaddr?.isEmpty ?? true, let host, !host.isEmpty else {
            plan = nil
            return
        }
        let hosts = host.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard hosts.contains(where: Self.needsLookup) else {
            plan = nil
            return
        }
        let ports = port.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        plan = Plan(hosts: hosts, ports: ports.flatMap { $0.count == hosts.count && $0.count > 1 ? $0 : nil })
    }

    var needsResolution: Bool { plan != nil }

    static func needsLookup(_ host: String) -> Bool {
        if host.isEmpty || host.hasPrefix("/") || host.hasPrefix("@") { return false } // default / Unix socket
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) != 1 && inet_pton(AF_INET6, host, &v6) != 1
    }

    /// The cached answer, if still fresh.
    func cachedOverrides(now: Instant = .now()) -> Result<Overrides, PostgresError>? {
        guard let plan, let entry = cache.withLock({ $0 }), entry.expires > now else { return nil }
        return entry.result.map { Self.overrides(for: $0, plan: plan) }
    }

    /// Resolves on a helper thread and calls `completion` there.
    func resolve(_ completion: @escaping @Sendable (Result<Overrides, PostgresError>) -> Void) {
        guard let plan else {
            completion(.success([]))
            return
        }
        Thread.detachNewThread { [self] in
            var pairs: [HostAddressPair] = []
            var failure: String?
            for (index, host) in plan.hosts.enumerated() {
                let port = plan.ports?[index]
                guard Self.needsLookup(host) else {
                    pairs.append(HostAddressPair(host: host, address: "", port: port))
                    continue
                }
                switch Self.lookup(host) {
                case .success(let addresses):
                    pairs += addresses.map { HostAddressPair(host: host, address: $0, port: port) }
                case .failure(let message):
                    failure = "could not resolve host \"\(host)\": \(message)"
                }
            }
            let result: Result<[HostAddressPair], PostgresError> =
                pairs.isEmpty
                ? .failure(PostgresError(kind: .unavailable, message: "could not connect: \(failure ?? "no address")"))
                : .success(pairs)
            let ttl = pairs.isEmpty ? Self.negativeTTL : Self.positiveTTL
            cache.withLock { $0 = (Instant.now() + ttl, result) }
            completion(result.map { Self.overrides(for: $0, plan: plan) })
        }
    }

    private static func overrides(for pairs: [HostAddressPair], plan: Plan) -> Overrides {
        var result: Overrides = [
            ("host", pairs.map(\.host).joined(separator: ",")),
            ("hostaddr", pairs.map(\.address).joined(separator: ",")),
        ]
        if plan.ports != nil { result.append(("port", pairs.map { $0.port ?? "" }.joined(separator: ","))) }
        return result
    }

    private struct LookupError: Error { let message: String }

    /// Blocking `getaddrinfo`: only ever called on the helper thread.
    private static func lookup(_ host: String) -> Result<[String], LookupError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            return .failure(LookupError(message: String(cString: gai_strerror(status))))
        }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let current = node {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(
                current.pointee.ai_addr, current.pointee.ai_addrlen, &buffer, socklen_t(buffer.count),
                nil, 0, NI_NUMERICHOST) == 0
            {
                let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !addresses.contains(text) { addresses.append(text) }
            }
            node = current.pointee.ai_next
        }
        return addresses.isEmpty ? .failure(LookupError(message: "no address")) : .success(addresses)
    }
}

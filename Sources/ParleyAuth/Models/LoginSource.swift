/// Where a login attempt comes from, as failed-login throttles count it.
enum LoginSource: Sendable, Hashable {
    /// A client address (IPv6 by its /64) that has no session of the account on this device.
    case address(String)
    /// Every such address together: guessing spread over many addresses still slows down.
    case account
    /// A device that already had a session of the account: only its own failures slow it, so nobody else's
    /// guessing can lock the owner out.
    case knownDevice(String)

    var key: String {
        switch self {
        case .address(let address): "address:" + address
        case .account: "account"
        case .knownDevice(let deviceId): "device:" + deviceId
        }
    }

    /// Failures allowed before delays start, given the per-source allowance.
    func allowance(perSource: Int) -> Int {
        self == .account ? perSource * Self.accountAllowanceFactor : perSource
    }

    /// How many sources' worth of failures the account as a whole allows.
    static let accountAllowanceFactor = 10

    /// The sources of an attempt: a known device alone, otherwise its address and the account.
    static func of(address: String, deviceId: String, knownDevice: Bool) -> [LoginSource] {
        if knownDevice && !deviceId.isEmpty { return [.knownDevice(deviceId)] }
        return [.address(TrustedProxies.rateLimitKey(for: address)), .account]
    }
}

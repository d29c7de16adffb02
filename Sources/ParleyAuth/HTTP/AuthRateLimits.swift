import ParleyHTTP

/// The token buckets of the auth routes: one per client address (a busy office behind one NAT must not hit
/// it: 120/min by default) and one per account (login attempts on one username, renewals by one user).
final class AuthRateLimits: Sendable {
    let byAddress: TokenBucketLimiter<String>
    let byAccount: TokenBucketLimiter<String>
    let proxies: TrustedProxies

    init(addressPerMinute: Int, accountPerMinute: Int, proxies: TrustedProxies) {
        byAddress = TokenBucketLimiter(ratePerMinute: addressPerMinute)
        byAccount = TokenBucketLimiter(ratePerMinute: accountPerMinute)
        self.proxies = proxies
    }

    /// The client's address: the socket peer, or what a trusted proxy says in `X-Forwarded-For`.
    func clientAddress(of request: HTTPRequest) -> String {
        guard !proxies.isEmpty else { return request.remoteAddress }
        return proxies.clientAddress(
            peer: request.remoteAddress, forwardedFor: request.headers.values(for: "x-forwarded-for"))
    }

    /// Takes a token from the client address's bucket (429 + Retry-After when empty); returns the address.
    @discardableResult
    func admit(_ request: HTTPRequest) throws(APIError) -> String {
        let address = clientAddress(of: request)
        if let wait = byAddress.acquire(TrustedProxies.rateLimitKey(for: address)) {
            throw APIError.rateLimited(retryAfterSeconds: wait)
        }
        return address
    }

    func admit(account: String, appId: Int64) throws(APIError) {
        if let wait = byAccount.acquire("\(appId):\(account)") { throw APIError.rateLimited(retryAfterSeconds: wait) }
    }
}

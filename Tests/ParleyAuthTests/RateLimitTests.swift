import Foundation
import ParleyLiveSupport
import ParleyNet
import Testing

@testable import ParleyAuth

/// Per-address buckets, per-account login lock, client addresses behind trusted proxies.
@Suite("Rate limits and lockout")
struct RateLimitTests {
    /// A login as it reaches the server through the trusted proxy at 127.0.0.1 from the client at `address`.
    static func login(
        _ client: TestClient, appKey: String, _ username: String, _ password: String, from address: String,
        deviceId: String = ""
    ) async throws -> TestResponse {
        try await client.post(
            "/api/auth/login",
            json: ["username": username, "password": password, "platform": "ios", "deviceId": deviceId],
            headers: ["X-App-Key": appKey, "X-Forwarded-For": address])
    }

    @Test func addressBucketAnswers429WithRetryAfter() async throws {
        try await withLiveApp(environment: ["PARLEY_AUTH_RATE_PER_MINUTE": "5"]) { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            for attempt in 1...5 {
                let answer = try await client.login(
                    appKey: app.appKey, username: "user\(attempt)", password: "whatever1")
                #expect(answer.code == 1035)
            }
            let limited = try await client.login(appKey: app.appKey, username: "user6", password: "whatever1")
            #expect(limited.status == 429)
            #expect(limited.code == 1010)
            let retryAfter = try #require(limited.header("Retry-After").flatMap(Int.init))
            #expect((1...12).contains(retryAfter)) // 5/min refills one token every 12 s
            // Routes outside auth are not limited.
            #expect(try await client.get("/healthz").status == 200)
        }
    }

    @Test func imTokenRenewalChecksCredentialsBeforeTheAddressBucket() async throws {
        try await withLiveApp(environment: ["PARLEY_AUTH_RATE_PER_MINUTE": "3"]) { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let alice = try Session(try await client.register(appKey: app.appKey, username: "alice")) // token 1 of 3
            // Calls without credentials answer 401 and spend nothing: more of them than the bucket holds.
            for _ in 1...4 {
                #expect(try await client.post("/api/im/auth/token").code == 1030)
                #expect(try await client.post("/api/im/auth/token", token: "not-a-token").code == 1030)
            }
            #expect(try await client.post("/api/im/auth/token", token: alice.accessToken).status == 200) // token 2
            #expect(try await client.post("/api/im/auth/token", token: alice.accessToken).status == 200) // token 3
            let limited = try await client.post("/api/im/auth/token", token: alice.accessToken)
            #expect(limited.status == 429)
            #expect(limited.code == 1010)
            // With the bucket empty, a call without credentials still answers 401, not 429.
            let missing = try await client.post("/api/im/auth/token")
            #expect(missing.status == 401)
            #expect(missing.code == 1030)
        }
    }

    /// Failures slow the guesser's source, never the owner: another address, or a device that already had a
    /// session of the account, logs in at once; unknown accounts answer the same way.
    @Test func failuresDelayTheGuesserNotTheOwner() async throws {
        // A first delay far longer than any request takes here: the refusal cannot depend on the machine's load.
        let environment = [
            "PARLEY_LOGIN_MAX_FAILURES": "3", "PARLEY_TRUSTED_PROXIES": "127.0.0.1",
            "PARLEY_PUBLIC_URL": "http://127.0.0.1",
            "PARLEY_LOGIN_FIRST_DELAY_SECONDS": "60",
        ]
        try await withLiveApp(environment: environment) { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            func login(_ username: String, _ password: String, from address: String, deviceId: String = "")
                async throws -> TestResponse
            {
                try await Self.login(client, appKey: app.appKey, username, password, from: address, deviceId: deviceId)
            }
            _ = try Session(try await client.register(appKey: app.appKey, username: "alice"))
            #expect(try await login("alice", "correct horse", from: "203.0.113.1", deviceId: "phone").status == 200)

            let attacker = "198.51.100.9"
            for _ in 1...4 { #expect(try await login("alice", "guess1234", from: attacker).code == 1035) }
            let delayed = try await login("alice", "guess1234", from: attacker)
            #expect(delayed.status == 429)
            #expect(delayed.code == 1036)
            let retryAfter = try #require(delayed.header("Retry-After").flatMap(Int.init))
            #expect((1...60).contains(retryAfter))
            // The owner: from another address, and from a device that had a session even at the guesser's address.
            #expect(try await login("alice", "correct horse", from: "203.0.113.2").status == 200)
            #expect(try await login("alice", "correct horse", from: attacker, deviceId: "phone").status == 200)
            // An account that does not exist answers exactly the same way.
            for _ in 1...4 { #expect(try await login("ghost", "guess1234", from: attacker).code == 1035) }
            #expect(try await login("ghost", "guess1234", from: attacker).code == 1036)
        }
    }

    /// Guessing spread over many addresses still slows down once the account's allowance (ten addresses' worth)
    /// is spent; the owner's known device is not delayed by it.
    @Test func spreadGuessingSlowsDownTheWholeAccountButNotTheOwnersDevice() async throws {
        let environment = [
            "PARLEY_LOGIN_MAX_FAILURES": "1", "PARLEY_TRUSTED_PROXIES": "127.0.0.1",
            "PARLEY_PUBLIC_URL": "http://127.0.0.1",
            "PARLEY_LOGIN_FIRST_DELAY_SECONDS": "60",
        ]
        try await withLiveApp(environment: environment) { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            func login(_ password: String, from address: String, deviceId: String = "") async throws -> TestResponse {
                try await Self.login(client, appKey: app.appKey, "dora", password, from: address, deviceId: deviceId)
            }
            _ = try Session(try await client.register(appKey: app.appKey, username: "dora"))
            #expect(try await login("correct horse", from: "203.0.113.1", deviceId: "tablet").status == 200)
            // Allowance 1 x 10: the 11th address's attempt is admitted and sets the delay, the 12th waits.
            for host in 1...11 { #expect(try await login("guess1234", from: "198.51.100.\(host)").code == 1035) }
            #expect(try await login("guess1234", from: "198.51.100.12").code == 1036)
            #expect(try await login("correct horse", from: "198.51.100.13").code == 1036)
            #expect(try await login("correct horse", from: "198.51.100.14", deviceId: "tablet").status == 200)
        }
    }

    /// An attempt that waited for the rows' locks began (now()) before the attempt it waited for: it must not see
    /// that attempt's "no delay" as a delay still running (the function reads the clock, not the transaction start).
    @Test func anAttemptThatWaitedForTheLockSeesNoPhantomDelay() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let database = live.app.database
            let attempt = """
                SELECT parley_login_attempt(\(app.id), 'carol', ARRAY['address:192.0.2.1', 'account'],
                                            ARRAY[10, 100], 1, 900, 900)
                """
            let waited = try await database.withConnection { early in
                _ = try await early.query("BEGIN")
                _ = try await early.query("SELECT now()") // the transaction's start time is fixed here
                // Another attempt runs and commits in between (it sets next_attempt_at to its own time).
                #expect(try await database.query("\(unescaped: attempt)")[0].decode(0, as: Int.self) == 0)
                let wait = try await early.query("\(unescaped: attempt)")[0].decode(0, as: Int.self)
                _ = try await early.query("COMMIT")
                return wait
            }
            #expect(waited == 0)
        }
    }

    /// Parallel guesses cannot race past the count: it is taken under the throttle rows' locks.
    @Test func parallelGuessesCannotRacePastTheCount() async throws {
        let environment = [
            "PARLEY_LOGIN_MAX_FAILURES": "3", "PARLEY_AUTH_ACCOUNT_RATE_PER_MINUTE": "0",
            "PARLEY_LOGIN_FIRST_DELAY_SECONDS": "60",
        ]
        try await withLiveApp(environment: environment) { live in
            let (app, _) = try await live.createApp()
            _ = try Session(try await live.client().register(appKey: app.appKey, username: "erin"))
            let codes = try await withThrowingTaskGroup(of: Int?.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        try await live.client().login(appKey: app.appKey, username: "erin", password: "guess1234").code
                    }
                }
                var codes: [Int?] = []
                for try await code in group { codes.append(code) }
                return codes
            }
            // Three free failures and the one that sets the first delay; every other guess waits.
            #expect(codes.filter { $0 == 1035 }.count == 4)
            #expect(codes.filter { $0 == 1036 }.count == 12)
        }
    }

    @Test func successfulLoginClearsEarlierFailures() async throws {
        let environment = ["PARLEY_LOGIN_MAX_FAILURES": "3", "PARLEY_LOGIN_FIRST_DELAY_SECONDS": "60"]
        try await withLiveApp(environment: environment) { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            _ = try Session(try await client.register(appKey: app.appKey, username: "carol"))
            for _ in 1...2 { _ = try await client.login(appKey: app.appKey, username: "carol", password: "guess1234") }
            #expect(try await client.login(appKey: app.appKey, username: "carol").status == 200)
            for _ in 1...2 { _ = try await client.login(appKey: app.appKey, username: "carol", password: "guess1234") }
            #expect(try await client.login(appKey: app.appKey, username: "carol").status == 200)
        }
    }

    /// Registrations per address hold in PostgreSQL (every instance shares them), per app, IPv6 by its /64; a
    /// refusal is counted before any password is hashed and stores nothing.
    @Test func registrationsPerAddressAnswer1044WithRetryAfter() async throws {
        let environment = [
            "PARLEY_AUTH_REGISTRATIONS_PER_HOUR": "2", "PARLEY_TRUSTED_PROXIES": "127.0.0.1",
            "PARLEY_PUBLIC_URL": "http://127.0.0.1",
        ]
        try await withLiveApp(environment: environment) { live in
            let (app, _) = try await live.createApp()
            let (other, _) = try await live.createApp(name: "Other")
            let client = live.client()
            func register(_ username: String, from address: String, appKey: String? = nil) async throws
                -> TestResponse
            {
                try await client.post(
                    "/api/auth/register",
                    json: ["username": username, "password": "correct horse", "platform": "ios"],
                    headers: ["X-App-Key": appKey ?? app.appKey, "X-Forwarded-For": address])
            }
            #expect(try await register("ann", from: "203.0.113.7").status == 200)
            #expect(try await register("ben", from: "203.0.113.7").status == 200)
            let refused = try await register("cid", from: "203.0.113.7")
            #expect(refused.status == 429)
            #expect(refused.code == 1044)
            let retryAfter = try #require(refused.header("Retry-After").flatMap(Int.init))
            #expect((1...1800).contains(retryAfter)) // 2 an hour: one token back every 30 minutes
            #expect(try await client.login(appKey: app.appKey, username: "cid").code == 1035) // nothing stored
            // Other addresses and other apps have buckets of their own.
            #expect(try await register("cid", from: "203.0.113.8").status == 200)
            #expect(try await register("cid", from: "203.0.113.7", appKey: other.appKey).status == 200)
            // An IPv6 client's whole /64 is one source.
            #expect(try await register("dan", from: "2001:db8:5:6::1").status == 200)
            #expect(try await register("eve", from: "2001:db8:5:6:ffff::2").status == 200)
            #expect(try await register("fay", from: "2001:db8:5:6:1234::3").code == 1044)
            #expect(try await register("fay", from: "2001:db8:5:7::1").status == 200)
            #expect(live.app.metrics.render().contains(#"parley_quota_refusals_total{kind="registration"} 2"#))
        }
    }

    @Test func tokenBucketRefills() {
        let limiter = TokenBucketLimiter<String>(ratePerMinute: 60)
        let start = Instant(nanoseconds: 1_000_000_000_000)
        for _ in 0..<60 { #expect(limiter.acquire("a", now: start) == nil) }
        #expect(limiter.acquire("a", now: start) == 1)
        #expect(limiter.acquire("b", now: start) == nil) // buckets are per key
        #expect(limiter.acquire("a", now: start + .milliseconds(1001)) == nil)
        #expect(TokenBucketLimiter<String>(ratePerMinute: 0).acquire("x") == nil) // 0 = off
    }

    /// A rate per second with a burst of its own (the send limit's shape): the burst goes at once, then the rate.
    @Test func tokenBucketBurstThenRate() {
        let limiter = TokenBucketLimiter<Int>(ratePerSecond: 2, burst: 5)
        let start = Instant(nanoseconds: 5_000_000_000)
        for _ in 0..<5 { #expect(limiter.acquire(7, now: start) == nil) }
        #expect(limiter.acquire(7, now: start) == 1) // half a second to the next token: whole seconds, rounded up
        #expect(limiter.acquire(7, now: start + .milliseconds(499)) == 1)
        #expect(limiter.acquire(7, now: start + .milliseconds(500)) == nil)
        #expect(limiter.acquire(7, now: start + .milliseconds(500)) == 1)
        // Ten idle seconds refill the burst, not more.
        let later = start + .seconds(10)
        for _ in 0..<5 { #expect(limiter.acquire(7, now: later) == nil) }
        #expect(limiter.acquire(7, now: later) != nil)
        #expect(!TokenBucketLimiter<Int>(ratePerSecond: 0, burst: 5).isEnabled)
    }

    @Test func tokenBucketValue() {
        var bucket = TokenBucket(capacity: 2, now: 100)
        let perNanosecond = 1e-9 // one token a second
        #expect(bucket.take(now: 100, capacity: 2, refillPerNanosecond: perNanosecond) == nil)
        #expect(bucket.take(now: 100, capacity: 2, refillPerNanosecond: perNanosecond) == nil)
        #expect(bucket.take(now: 100, capacity: 2, refillPerNanosecond: perNanosecond) == 1)
        // A clock that goes backwards refills nothing and does not move the bucket's time back.
        #expect(bucket.take(now: 50, capacity: 2, refillPerNanosecond: perNanosecond) == 1)
        #expect(bucket.updated == 100)
        #expect(!bucket.isFull(now: 100 + 1_999_999_999, capacity: 2, refillPerNanosecond: perNanosecond))
        #expect(bucket.isFull(now: 100 + 2_000_000_000, capacity: 2, refillPerNanosecond: perNanosecond))
        // A slow rate waits as long as it takes: 1 per hour.
        var slow = TokenBucket(capacity: 1, now: 0)
        #expect(slow.take(now: 0, capacity: 1, refillPerNanosecond: 1 / 3600e9) == nil)
        #expect(slow.take(now: 0, capacity: 1, refillPerNanosecond: 1 / 3600e9) == 3600)
    }

    @Test func clientAddressBehindTrustedProxies() throws {
        let proxies = try TrustedProxies(parsing: "10.0.0.0/8, 192.168.1.10, ::1")
        // Not from a proxy: X-Forwarded-For is ignored (anyone can send it).
        #expect(proxies.clientAddress(peer: "203.0.113.5", forwardedFor: ["1.2.3.4"]) == "203.0.113.5")
        // From a proxy: the right-most untrusted hop.
        #expect(
            proxies.clientAddress(peer: "10.1.2.3", forwardedFor: ["6.6.6.6, 198.51.100.7, 10.9.9.9"]) == "198.51.100.7"
        )
        #expect(proxies.clientAddress(peer: "::1", forwardedFor: ["198.51.100.7"]) == "198.51.100.7")
        #expect(proxies.clientAddress(peer: "192.168.1.10", forwardedFor: ["garbage"]) == "192.168.1.10")
        #expect(proxies.clientAddress(peer: "10.0.0.1", forwardedFor: []) == "10.0.0.1")
        #expect(proxies.isTrusted("::ffff:10.2.3.4"))
        #expect(!proxies.isTrusted("192.168.1.11"))
        #expect(throws: TrustedProxies.Invalid.self) { try TrustedProxies(parsing: "10.0.0.0/33") }
        #expect(throws: TrustedProxies.Invalid.self) { try TrustedProxies(parsing: "not-an-ip") }
    }

    /// IPv6 clients share one budget per /64 (a subscriber's allocation); IPv4 addresses and garbage stay as sent.
    @Test func ipv6ClientsAreLimitedByTheirSlash64() async throws {
        #expect(TrustedProxies.rateLimitKey(for: "2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(TrustedProxies.rateLimitKey(for: "2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64")
        #expect(TrustedProxies.rateLimitKey(for: "2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(TrustedProxies.rateLimitKey(for: "::ffff:192.0.2.7") == "::ffff:192.0.2.7")
        #expect(TrustedProxies.rateLimitKey(for: "192.0.2.7") == "192.0.2.7")
        #expect(TrustedProxies.rateLimitKey(for: "not an address") == "not an address")
        // Behind a trusted proxy, addresses of one /64 drain one bucket.
        try await withLiveApp(
            environment: [
                "PARLEY_AUTH_RATE_PER_MINUTE": "2", "PARLEY_TRUSTED_PROXIES": "127.0.0.1",
                "PARLEY_PUBLIC_URL": "http://127.0.0.1",
            ]
        ) { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            func login(_ username: String, from address: String) async throws -> TestResponse {
                try await Self.login(client, appKey: app.appKey, username, "p", from: address)
            }
            #expect(try await login("u1", from: "2001:db8:7:7::1").code == 1035)
            #expect(try await login("u2", from: "2001:db8:7:7::2").code == 1035)
            #expect(try await login("u3", from: "2001:db8:7:7:1:2:3:4").code == 1010)
            #expect(try await login("u4", from: "2001:db8:7:8::1").code == 1035) // another /64
        }
    }

    @Test func trustedProxyHeaderDrivesTheBucket() async throws {
        try await withLiveApp(environment: [
            "PARLEY_AUTH_RATE_PER_MINUTE": "2", "PARLEY_TRUSTED_PROXIES": "127.0.0.1",
            "PARLEY_PUBLIC_URL": "http://127.0.0.1",
        ]) { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            func login(from address: String) async throws -> TestResponse {
                try await Self.login(client, appKey: app.appKey, "u", "p", from: address)
            }
            #expect(try await login(from: "198.51.100.1").code == 1035)
            #expect(try await login(from: "198.51.100.1").code == 1035)
            #expect(try await login(from: "198.51.100.1").code == 1010)
            #expect(try await login(from: "198.51.100.2").code == 1035) // another client behind the same proxy
        }
    }
}

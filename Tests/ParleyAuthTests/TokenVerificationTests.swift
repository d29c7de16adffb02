import Foundation
import ParleyCrypto
import ParleyHTTP
import ParleyLiveSupport
import Testing

@testable import ParleyAuth

/// Audience confusion, tampering, expiry, `alg: none`, unknown keys; expired and invalid told apart.
@Suite("Token verification")
struct TokenVerificationTests {
    struct Claims: Encodable {
        var iss = "parley"
        var aud = "api"
        var sub: String
        var app: Int64
        var sid: String
        var pv = 0
        var iat: Int64
        var exp: Int64
    }

    static func forge(_ claims: Claims, key: [UInt8], kid: String) throws -> String {
        try JWT.sign(header: ["kid": kid], claims: claims, key: key)
    }

    static func base64URL(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }

    @Test func imTokenIsRefusedOnRESTAndAccessTokenOnTheWebSocket() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let session = try Session(try await client.register(appKey: app.appKey, username: "alice"))
            let imOnREST = try await client.get("/api/users/me", token: session.imToken)
            #expect(imOnREST.status == 401)
            #expect(imOnREST.code == 1032)
            #expect(imOnREST.header("WWW-Authenticate")?.contains("invalid_token") == true)

            let authenticator = live.auth.authenticator
            #expect(throws: APIError.self) { try authenticator.verifyIMToken(session.accessToken) }
            do {
                _ = try authenticator.verifyIMToken(session.accessToken)
            } catch let error as APIError {
                #expect(error.code == 1032)
            }
            #expect(try authenticator.verifyIMToken(session.imToken).userId == session.userId)
        }
    }

    @Test func tamperedExpiredNoneAndUnknownKeyTokens() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let session = try Session(try await client.register(appKey: app.appKey, username: "bob"))
            let keys = live.tokenKeys
            let signingKey = try #require(keys.key(for: keys.signingKeyID))
            let now = Int64(Date().timeIntervalSince1970)
            let claims = Claims(sub: session.userId, app: app.id, sid: session.sessionId, iat: now - 60, exp: now + 600)

            // A correctly forged token with the real key works (the baseline for the cases below).
            let good = try Self.forge(claims, key: signingKey, kid: keys.signingKeyID)
            #expect(try await client.get("/api/users/me", token: good).status == 200)

            // Tampered payload (another user), original signature.
            let parts = session.accessToken.split(separator: ".").map(String.init)
            var other = claims
            other.sub = "u_someoneelse"
            let otherPayload = try Self.forge(other, key: signingKey, kid: keys.signingKeyID).split(separator: ".")[1]
            let tampered = parts[0] + "." + otherPayload + "." + parts[2]
            let tamperedAnswer = try await client.get("/api/users/me", token: tampered)
            #expect(tamperedAnswer.status == 401)
            #expect(tamperedAnswer.code == 1030)

            // A flipped signature byte.
            var signature = Array(parts[2].utf8)
            signature[3] = signature[3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            let flipped = parts[0] + "." + parts[1] + "." + String(decoding: signature, as: UTF8.self)
            #expect(try await client.get("/api/users/me", token: flipped).code == 1030)

            // Expired: genuine but past exp -> 1031 (refresh), not 1030 (log in again).
            var old = claims
            old.iat = now - 3600
            old.exp = now - 10
            let expired = try await client.get(
                "/api/users/me",
                token: try Self.forge(
                    old, key: signingKey,
                    kid: keys.signingKeyID))
            #expect(expired.status == 401)
            #expect(expired.code == 1031)

            // alg: none with no signature, and with the original signature.
            let noneHeader = Self.base64URL(#"{"alg":"none","kid":"\#(keys.signingKeyID)","typ":"JWT"}"#)
            #expect(try await client.get("/api/users/me", token: noneHeader + "." + parts[1] + ".").code == 1030)
            #expect(
                try await client.get("/api/users/me", token: noneHeader + "." + parts[1] + "." + parts[2]).code == 1030)

            // Signed with a key the server does not have, under an unknown kid and under the real kid.
            let stranger = SecureRandom.bytes(32)
            #expect(
                try await client.get("/api/users/me", token: try Self.forge(claims, key: stranger, kid: "k9")).code
                    == 1030)
            #expect(
                try await client.get(
                    "/api/users/me",
                    token: try Self.forge(claims, key: stranger, kid: keys.signingKeyID)
                ).code == 1030)

            // Garbage, and no token at all.
            #expect(try await client.get("/api/users/me", token: "not.a.token").code == 1030)
            let missing = try await client.get("/api/users/me")
            #expect(missing.status == 401)
            #expect(missing.code == 1030)
            // Another issuer, otherwise perfect.
            var foreign = claims
            foreign.iss = "someone-else"
            #expect(
                try await client.get(
                    "/api/users/me",
                    token: try Self.forge(
                        foreign, key: signingKey,
                        kid: keys.signingKeyID)
                ).code == 1030)
        }
    }

    @Test func rotatedSigningKeysKeepOldTokensValid() async throws {
        try await withDatabase { url in
            let oldKey = SecureRandom.bytes(32)
            let newKey = SecureRandom.bytes(32)
            let master = MasterKey.generateHex()
            let first = try await LiveApp(
                databaseURL: url, masterKeyHex: master,
                environment: ["PARLEY_TOKEN_KEYS": "k1:\(Base64.encode(oldKey))"])
            let (app, _) = try await first.createApp()
            let session = try Session(try await first.client().register(appKey: app.appKey, username: "carol"))
            await first.stop()

            // k2 signs now, k1 still verifies.
            let second = try await LiveApp(
                databaseURL: url, masterKeyHex: master,
                environment: [
                    "PARLEY_TOKEN_KEYS": "k2:\(Base64URL.encode(newKey)),k1:\(Base64.encode(oldKey))"
                ])
            #expect(try await second.client().get("/api/users/me", token: session.accessToken).status == 200)
            let fresh = try Session(try await second.client().refresh(session.refreshToken))
            #expect(
                fresh.accessToken.split(separator: ".").first.flatMap { Base64URL.decode(String($0)) }
                    .map { String(decoding: $0, as: UTF8.self).contains(#""kid":"k2""#) } == true)
            await second.stop()

            // k1 dropped: its tokens are refused as invalid.
            let third = try await LiveApp(
                databaseURL: url, masterKeyHex: master,
                environment: ["PARLEY_TOKEN_KEYS": "k2:\(Base64.encode(newKey))"])
            #expect(try await third.client().get("/api/users/me", token: session.accessToken).code == 1030)
            #expect(try await third.client().get("/api/users/me", token: fresh.accessToken).status == 200)
            await third.stop()
        }
    }

    @Test func tokenServiceChecksInOrder() throws {
        let keys = TokenKeyRing(derivedFrom: try MasterKey(parsing: MasterKey.generateHex()))
        let service = TokenService(keys: keys)
        let principal = Principal(appId: 7, userId: "u_x", sessionId: "s_y")
        let issued = try service.issue(.im, for: principal, consentedVersion: 3, lifetime: 60)
        let claims = try service.verify(issued.token, audience: .im)
        #expect(claims.principal == principal)
        #expect(claims.pv == 3)
        #expect(claims.exp - claims.iat == 60)
        // Past expiry and the wrong audience: audience is reported first (the token is genuine either way).
        #expect(throws: APIError.tokenExpired) { try service.verify(issued.token, audience: .im, now: claims.exp) }
        #expect(throws: APIError.self) { try service.verify(issued.token, audience: .api) }
    }

    @Test func bearerHeaderParsing() {
        #expect(Authenticator.bearerToken("Bearer abc") == "abc")
        #expect(Authenticator.bearerToken("bearer  abc ") == "abc")
        #expect(Authenticator.bearerToken("Bearer abc.def") == "abc.def")
        #expect(Authenticator.bearerToken("bEARER   abc  ") == "abc")
        #expect(Authenticator.bearerToken("Bearer\tabc") == nil) // the scheme ends with one space (RFC 9110 §11.1)
        for bad in ["Bearer ", "Bearer    ", "Basic abc", "Bearerabc", ""] as [String?] + [nil] {
            #expect(Authenticator.bearerToken(bad) == nil, "\(bad ?? "nil")")
        }
        // Only RFC 6750 b64token characters: other bytes (U+212A is canonically equal to `K`) are no token.
        #expect(Authenticator.bearerToken("Bearer a-b_c.d~e+f/g==") == "a-b_c.d~e+f/g==")
        for bad in ["Bearer ab\u{212A}c", "Bearer a b", "Bearer a,b", "Bearer é", "Bearer a\u{0}b"] {
            #expect(Authenticator.bearerToken(bad) == nil, "\(bad)")
        }
    }

    /// Lowering a lifetime cuts tokens issued under the longer one: ended sessions are remembered only for the
    /// current lifetimes, so such a token would otherwise outlive its session's revocation.
    @Test func aShortenedLifetimeCutsLongerLivedTokens() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let before = try Session(try await client.register(appKey: app.appKey, username: "lena"))
            #expect(try await client.get("/api/users/me", token: before.accessToken).status == 200)
            let updated = try await live.auth.appRepository.update(
                appKey: app.appKey, lifetimes: TokenLifetimeOverrides(access: 60))
            live.auth.directory.upsert(try #require(updated))
            let cut = try await client.get("/api/users/me", token: before.accessToken)
            #expect(cut.code == 1031)
            #expect(cut.message == "token expired: its app's token lifetime was shortened")
            // The IM token's lifetime was not lowered; a token issued now works.
            #expect(try live.auth.authenticator.verifyIMToken(before.imToken).sessionId == before.sessionId)
            let after = try Session(try await client.refresh(before.refreshToken))
            #expect(try await client.get("/api/users/me", token: after.accessToken).status == 200)
        }
    }

    /// A token that differs from a verified one only by canonically equivalent characters is not that token.
    @Test func aCanonicallyEquivalentTokenIsRefused() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            var token = try Session(try await client.register(appKey: app.appKey, username: "kate")).accessToken
            // A token without a `K` is rare (its signature is random); a few logins make one certain.
            for _ in 0..<10 where !token.utf8.contains(UInt8(ascii: "K")) {
                token = try Session(try await client.login(appKey: app.appKey, username: "kate")).accessToken
            }
            #expect(try await client.get("/api/users/me", token: token).status == 200)
            let k = try #require(token.firstIndex(of: "K"))
            var twin = token
            twin.replaceSubrange(k...k, with: "\u{212A}")
            #expect(twin == token) // Swift's String equality: canonical equivalence
            #expect(try await client.get("/api/users/me", token: twin).code == 1030)
        }
    }

    private func request(query: String?, _ fields: [(String, String)] = []) -> HTTPRequest {
        var headers = HTTPHeaders()
        for (name, value) in fields { headers.add(name: name, value: value) }
        return HTTPRequest(
            head: HTTPRequestHead(
                method: .GET, target: "/ws" + (query.map { "?" + $0 } ?? ""), path: "/ws",
                query: query, headers: headers))
    }

    /// One reader for every route: the header always; the query only where the route allows it, and never in place
    /// of a header that is not a bearer token.
    @Test func bearerTokenOfARequest() {
        let header = request(query: "token=q", [("Authorization", "Bearer h")])
        #expect(Authenticator.bearerToken(of: header) == "h")
        #expect(Authenticator.bearerToken(of: header, from: .headerOrQuery) == "h")
        let queryOnly = request(query: "a=1&token=q%2Eq")
        #expect(Authenticator.bearerToken(of: queryOnly) == nil)
        #expect(Authenticator.bearerToken(of: queryOnly, from: .headerOrQuery) == "q.q")
        let basic = request(query: "token=q", [("Authorization", "Basic x")])
        #expect(Authenticator.bearerToken(of: basic, from: .headerOrQuery) == nil)
        #expect(Authenticator.bearerToken(of: request(query: "token="), from: .headerOrQuery) == nil)
        #expect(Authenticator.bearerToken(of: request(query: nil), from: .headerOrQuery) == nil)
    }
}

/// The verified-token cache answers only for the exact bytes it verified (issue 18, item 10).
@Suite struct VerifiedTokenCacheTests {
    @Test func canonicallyEquivalentTokensAreDifferentKeys() {
        let cache = VerifiedTokenCache(capacity: 64)
        let claims = TokenClaims(
            iss: "parley", aud: "api", sub: "u_a", app: 1, sid: "s", pv: 0, iat: 0, exp: 100, jti: nil)
        // "K" (U+004B) and the Kelvin sign (U+212A) are equal as Swift Strings, not as bytes.
        let verified = "eyJ.K.sig"
        let lookalike = "eyJ.\u{212A}.sig"
        #expect(verified == lookalike)
        cache.insert(claims, for: verified, now: 0)
        #expect(cache.claims(for: verified) == claims)
        #expect(cache.claims(for: lookalike) == nil)
    }
}

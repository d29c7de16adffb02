import Foundation
import ParleyHTTP

/// A handler of a protected route: the request, its context and the verified caller.
public typealias AuthenticatedHandler = @Sendable (HTTPRequest, RequestContext, Principal) async throws -> HTTPResponse

/// Whether a route answers 1033 while the user has not accepted the app's current privacy policy.
public enum ConsentRequirement: Sendable, Hashable {
    case required
    /// Consent itself, logout and profile reads stay usable, so the client can show and accept the policy.
    case exempt
}

/// A verified token: who calls, through which app, with which claims.
public struct VerifiedToken: Sendable {
    public var principal: Principal
    public var claims: TokenClaims
    public var app: AppSettings
}

/// Where a request may carry its bearer token.
public enum TokenSource: Sendable, Hashable {
    /// `Authorization: Bearer <token>` only (every REST route).
    case header
    /// The header, or `?token=` when there is no `Authorization` header: browsers and some WebSocket clients
    /// cannot set headers on an upgrade request.
    case headerOrQuery
}

/// Verifies bearer tokens: the one authentication path of every route, the WebSocket upgrade and the update check.
/// The common path does no I/O: lookups in memory (the token's already-checked signature, app settings, ended
/// sessions); a token seen for the first time costs an HMAC and a JSON decode. An app created on another instance
/// a moment ago (not yet in the directory) costs one database read, and a user whose token predates an app's
/// privacy-policy bump costs one (then `ConsentCache` knows).
///
/// ```swift
/// router.get("/api/things", auth.protect { request, context, principal in ... })
/// router.get("/api/other", auth.protect(consent: .exempt) { request, context, _ in
///     let principal = try context.requirePrincipal() ...
/// })
/// ```
public final class Authenticator: Sendable {
    let tokens: TokenService
    let directory: AppDirectory
    let revocations: SessionRevocations
    let consents: ConsentCache
    let users: UserRepository
    /// The directory with its database fallback, for apps not yet in the directory.
    let apps: AppResolver
    /// The server-wide lifetimes (apps may override them): no token may have lived longer than its kind's current
    /// lifetime allows.
    let lifetimes: TokenLifetimes
    let verified = VerifiedTokenCache()

    init(
        tokens: TokenService, directory: AppDirectory, revocations: SessionRevocations, consents: ConsentCache,
        users: UserRepository, apps: AppResolver, lifetimes: TokenLifetimes
    ) {
        self.lifetimes = lifetimes
        self.tokens = tokens
        self.directory = directory
        self.revocations = revocations
        self.consents = consents
        self.users = users
        self.apps = apps
    }

    /// Wraps `handler` so it runs only for a valid, unrevoked token of `audience`; the principal is also put in
    /// the context (`context.requirePrincipal()`).
    public func protect(
        audience: TokenAudience = .api, consent: ConsentRequirement = .required,
        _ handler: @escaping AuthenticatedHandler
    ) -> HTTPHandler {
        { [self] request, context in
            let verified = try await authenticate(request, audience: audience, consent: consent)
            var context = context
            context[PrincipalKey.self] = verified.principal
            return try await handler(request, context, verified.principal)
        }
    }

    /// The same check as a middleware, for a group of routes built with their own router.
    public func middleware(audience: TokenAudience = .api, consent: ConsentRequirement = .required)
        -> any HTTPMiddleware
    {
        AuthenticationMiddleware(authenticator: self, audience: audience, consent: consent)
    }

    /// Verifies the request's bearer token (signature, issuer, audience, expiry, app, session, consent); an
    /// `X-App-Key` header, when present, must name the token's app.
    public func authenticate(
        _ request: HTTPRequest, audience: TokenAudience = .api,
        consent: ConsentRequirement = .required,
        from source: TokenSource = .header
    ) async throws -> VerifiedToken {
        guard let token = Self.bearerToken(of: request, from: source) else { throw APIError.tokenMissing }
        let claims = try verifiedClaims(token, audience: audience)
        // An app created on another instance a moment ago is read from the database (before NOTIFY or the poll
        // brings it here), so no route refuses a token another route accepts.
        let app = try await apps.app(id: claims.app)
        let verified = try accept(claims, app: app, appKey: request.headers["x-app-key"])
        if consent == .required { try await requireConsent(verified) }
        return verified
    }

    /// `authenticate`'s checks without I/O, for immediate handlers: nil when the token is missing or refused, or
    /// when the answer needs the database (its app is not in memory yet); the route's async handler then calls
    /// `authenticate`, which decides. Consent is not checked.
    public func authenticateInMemory(_ request: HTTPRequest, audience: TokenAudience = .api) -> VerifiedToken? {
        guard let token = Self.bearerToken(of: request, from: .header) else { return nil }
        return try? verify(token, audience: audience, appKey: request.headers["x-app-key"])
    }

    /// An IM token's principal, checked in memory (for tests and tools; routes call `authenticate`).
    func verifyIMToken(_ token: String) throws(APIError) -> Principal {
        try verify(token, audience: .im, appKey: nil).principal
    }

    /// Token checks without I/O.
    private func verify(_ token: String, audience: TokenAudience, appKey: String?) throws(APIError) -> VerifiedToken {
        let claims = try verifiedClaims(token, audience: audience)
        return try accept(claims, app: directory.app(id: claims.app), appKey: appKey)
    }

    /// Signature (cached per token), issuer, audience, expiry.
    private func verifiedClaims(_ token: String, audience: TokenAudience) throws(APIError) -> TokenClaims {
        let now = Int64(Date().timeIntervalSince1970)
        let claims: TokenClaims
        if let cached = verified.claims(for: token) {
            claims = cached
        } else {
            claims = try tokens.authenticate(token)
            if claims.exp > now { verified.insert(claims, for: token, now: now) }
        }
        try tokens.check(claims, audience: audience, now: now)
        return claims
    }

    /// The app still exists, is the one `X-App-Key` names (when sent), the token is no longer-lived than its kind's
    /// current lifetime, and the session has not ended.
    ///
    /// The lifetime check is what makes ended sessions safe to forget: they are remembered for the longest current
    /// lifetime (`AuthSyncService.retentionSeconds`), so a lowered TTL must also cut tokens issued under the longer
    /// one, or a revoked session's token would outlive its revocation.
    private func accept(_ claims: TokenClaims, app: AppSettings?, appKey: String?) throws(APIError) -> VerifiedToken {
        guard let app else { throw APIError.tokenInvalid }
        if let appKey, appKey != app.appKey {
            throw APIError.forbidden.with(message: "the token belongs to another app than X-App-Key names")
        }
        let current = lifetimes.applying(app)
        let longest = claims.aud == TokenAudience.api.rawValue ? current.access : current.im
        guard claims.exp - claims.iat <= Int64(longest) else {
            throw APIError.tokenExpired.with(message: "token expired: its app's token lifetime was shortened")
        }
        guard !revocations.contains(claims.sid) else { throw APIError.sessionEnded }
        return VerifiedToken(principal: claims.principal, claims: claims, app: app)
    }

    /// 1033 unless the user accepted the app's current privacy version.
    func requireConsent(_ verified: VerifiedToken) async throws {
        let required = verified.app.privacyVersion
        guard verified.claims.pv < required else { return }
        let principal = verified.principal
        if consents.covers(appId: principal.appId, userId: principal.userId, version: required) { return }
        let accepted = try await users.consentedVersion(appId: principal.appId, userId: principal.userId) ?? -1
        consents.record(appId: principal.appId, userId: principal.userId, version: accepted)
        guard accepted >= required else { throw APIError.consentRequired }
    }

    /// The one bearer-token reader: `Authorization: Bearer <token>` (RFC 6750 §2.1), or with `.headerOrQuery` the
    /// `token` query parameter when no `Authorization` header is sent (RFC 6750 §2.3). A present header that is not
    /// a bearer token is not replaced by the query.
    public static func bearerToken(of request: HTTPRequest, from source: TokenSource = .header) -> String? {
        if let header = request.headers["authorization"] { return bearerToken(header) }
        // A token that does not decode is no token (401), like a missing one.
        guard source == .headerOrQuery, let token = try? request.query.value(for: "token"), isToken(token.utf8) else {
            return nil
        }
        return String(token)
    }

    /// RFC 6750's b64token characters only (a JWT is base64url and dots). Anything else is no token, and every
    /// token compared or cached is ASCII, where String equality is byte equality (Unicode canonical equivalence
    /// would otherwise let different bytes, e.g. U+212A for `K`, match a verified token).
    public static func isToken(_ bytes: some Collection<UInt8>) -> Bool {
        !bytes.isEmpty
            && bytes.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: "~") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
                    || byte == UInt8(ascii: "=")
            }
    }

    /// The token of `Bearer <token>` (scheme case-insensitive, RFC 9110 §11.1; blanks around the token dropped).
    static func bearerToken(_ header: String?) -> String? {
        guard let header else { return nil }
        // Byte loops, not Foundation's trimming: this runs on every authenticated request.
        let bytes = header.utf8
        guard bytes.count > 7 else { return nil }
        var index = bytes.startIndex
        for expected in "bearer ".utf8 {
            guard bytes[index] | 0x20 == expected else { return nil } // | 0x20 lower-cases letters, keeps the space
            index = bytes.index(after: index)
        }
        var end = bytes.endIndex
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while index < end, isBlank(bytes[index]) { index = bytes.index(after: index) }
        while index < end, isBlank(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        guard index < end, isToken(bytes[index..<end]) else { return nil }
        return String(header[index..<end])
    }
}

/// `Authenticator` as a middleware: fills `context[PrincipalKey.self]` or answers the token error.
struct AuthenticationMiddleware: HTTPMiddleware {
    let authenticator: Authenticator
    let audience: TokenAudience
    let consent: ConsentRequirement

    func handle(_ request: HTTPRequest, _ context: RequestContext, next: HTTPHandler) async throws -> HTTPResponse {
        let verified = try await authenticator.authenticate(request, audience: audience, consent: consent)
        var context = context
        context[PrincipalKey.self] = verified.principal
        return try await next(request, context)
    }
}

import Foundation
import ParleyCrypto
import ParleyHTTP

/// Verifies server-to-server requests signed with the app secret (see `RequestSignature`): app key, timestamp
/// within ±`window` seconds, signature (constant-time), then the nonce, which is claimed only after the
/// signature checked out so that strangers cannot fill the nonce table.
struct SignedRequestVerifier: Sendable {
    let apps: AppResolver
    let secrets: AppSecretBox
    let nonces: NonceRepository
    let window: Int

    /// The app that signed the request, or 1038 / 1039 naming what is wrong.
    func verify(_ request: HTTPRequest, now: Date = Date()) async throws -> AppSettings {
        let headers = request.headers
        guard let appKey = headers["x-app-key"], !appKey.isEmpty else {
            throw APIError.unknownAppKey.with(message: "missing X-App-Key header")
        }
        guard let timestamp = headers["x-timestamp"], let nonce = headers["x-nonce"],
            let signature = headers["x-signature"]
        else {
            throw APIError.signatureInvalid.with(message: "signed request needs X-Timestamp, X-Nonce and X-Signature")
        }
        guard let seconds = Int64(timestamp), timestamp.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw APIError.signatureInvalid.with(message: "X-Timestamp must be unix seconds")
        }
        guard (8...128).contains(nonce.utf8.count), nonce.utf8.allSatisfy(Validation.isIdentifierByte) else {
            throw APIError.signatureInvalid.with(message: "X-Nonce must be 8-128 of [A-Za-z0-9_.@-]")
        }
        guard let app = try await apps.app(key: appKey) else { throw APIError.unknownAppKey }
        guard abs(Int64(now.timeIntervalSince1970) - seconds) <= Int64(window) else {
            throw APIError.signatureStale.with(
                message: "X-Timestamp is more than \(window) seconds away from the server's clock")
        }
        let presented = Array(signature.lowercased().utf8)
        let target = request.head.path + (request.head.query.map { "?" + $0 } ?? "")
        var matched = false
        for secret in usableSecrets(app, now: now) {
            let expected = RequestSignature.sign(
                secret: secret, method: request.method.rawValue, pathWithQuery: target,
                timestamp: timestamp, nonce: nonce, body: request.bodyBytes)
            if ConstantTime.equals(presented, Array(expected.utf8)) { matched = true }
        }
        guard matched else { throw APIError.signatureInvalid }
        // Kept for twice the window: a replay after that fails the timestamp check anyway.
        guard try await nonces.claim(appId: app.id, nonce: nonce, keepSeconds: 2 * window) else {
            throw APIError.signatureReplayed
        }
        return app
    }

    /// The current secret and, during a rotation's grace period, the previous one.
    private func usableSecrets(_ app: AppSettings, now: Date) -> [String] {
        var result: [String] = []
        if let current = secrets.open(app.secretCiphertext, appKey: app.appKey) { result.append(current) }
        if let previous = app.previousSecretCiphertext, let until = app.previousSecretExpiresAt, until > now,
            let secret = secrets.open(previous, appKey: app.appKey)
        {
            result.append(secret)
        }
        return result
    }
}

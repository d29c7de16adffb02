import ParleyAuth
import ParleyCrypto

/// Signs outgoing webhook calls exactly as inbound server-to-server requests are signed (`RequestSignature`):
/// `X-App-Key`, `X-Timestamp` (unix seconds), `X-Nonce` (fresh on every attempt) and `X-Signature`, so the
/// app's backend verifies them with the code it already has for calling Parley.
public enum WebhookSigner {
    /// The signature headers of one attempt. `target` is the URL's path and query as sent.
    public static func headers(
        appKey: String, secret: String, method: String = "POST", target: String, body: [UInt8], timestamp: Int64,
        nonce: String = newNonce()
    ) -> [(String, String)] {
        let signature = RequestSignature.sign(
            secret: secret, method: method, pathWithQuery: target, timestamp: String(timestamp), nonce: nonce,
            body: body)
        return [
            ("X-App-Key", appKey), ("X-Timestamp", String(timestamp)), ("X-Nonce", nonce),
            ("X-Signature", signature),
        ]
    }

    /// 128 random bits in hex: within the 8-128 identifier characters a verifier accepts.
    public static func newNonce() -> String { Hex.encode(SecureRandom.bytes(16)) }
}

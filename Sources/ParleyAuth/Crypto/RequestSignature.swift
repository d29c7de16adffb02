import ParleyCrypto

/// The signature of a server-to-server request:
///
///     X-Signature = lowercase_hex(HMAC-SHA256(key: app secret (its UTF-8 bytes, `as_` prefix included),
///         message: METHOD + "\n" + PATH_WITH_QUERY + "\n" + TIMESTAMP + "\n" + NONCE + "\n" + lowercase_hex(SHA-256(body))))
///
/// PATH_WITH_QUERY is the request target exactly as sent (not decoded); the body hash is over the raw bytes
/// received (the empty body hashes to e3b0c442…b855).
public enum RequestSignature {
    public static func stringToSign(
        method: String, pathWithQuery: String, timestamp: String, nonce: String,
        body: [UInt8]
    ) -> String {
        method + "\n" + pathWithQuery + "\n" + timestamp + "\n" + nonce + "\n" + Hex.encode(SHA256.hash(body))
    }

    public static func sign(
        secret: String, method: String, pathWithQuery: String, timestamp: String, nonce: String,
        body: [UInt8]
    ) -> String {
        let message = stringToSign(
            method: method, pathWithQuery: pathWithQuery, timestamp: timestamp, nonce: nonce,
            body: body)
        return Hex.encode(HMAC.sha256(key: Array(secret.utf8), message: Array(message.utf8)))
    }
}

/// SHA-1 (FIPS 180-4).
///
/// Broken for collision resistance; it exists only because the WebSocket opening handshake
/// (RFC 6455 section 4.2.2) defines `Sec-WebSocket-Accept` as base64(SHA-1(key + GUID)).
/// Do not use it for anything else.
public enum SHA1 {
    /// Digest length in bytes.
    public static let byteCount = 20

    /// Returns the SHA-1 digest of `data`.
    public static func hash(_ data: some Collection<UInt8>) -> [UInt8] {
        Digest.hash(data, algorithm: FetchedAlgorithm.sha1, length: byteCount)
    }
}

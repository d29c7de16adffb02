import COpenSSL

/// HMAC (RFC 2104).
public enum HMAC {
    /// Returns HMAC-SHA-256 of `message` under `key` (32 bytes).
    ///
    /// Any key length is accepted, as RFC 2104 allows; keys longer than the 64-byte block are
    /// hashed first. Callers that need a minimum strength (JWT's HS256 requires 32 bytes,
    /// RFC 7518 section 3.2) check it themselves.
    public static func sha256(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        compute(key: key, message: message, algorithm: FetchedAlgorithm.sha256, length: SHA256.byteCount)
    }

    /// HMAC-SHA-1 (RFC 2202), for protocols that define it: coturn's REST credentials (TURN `use-auth-secret`)
    /// are base64(HMAC-SHA-1(secret, username)). Nothing of Parley's own uses it.
    public static func sha1(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        compute(key: key, message: message, algorithm: FetchedAlgorithm.sha1, length: SHA1.byteCount)
    }

    private static func compute(
        key: some Collection<UInt8>, message: some Collection<UInt8>, algorithm: FetchedAlgorithm, length: Int
    ) -> [UInt8] {
        withBytes(key) { keyPointer, keyCount in
            withBytes(message) { messagePointer, messageCount in
                // HMAC()'s key length is an Int32; a key that large is a programming error.
                precondition(keyCount <= Int(Int32.max), "HMAC key too large")
                return [UInt8](unsafeUninitializedCapacity: length) { output, initialized in
                    var written: UInt32 = 0
                    // The one-shot HMAC() is not deprecated in OpenSSL 3 (only HMAC_CTX is) and
                    // fails only on allocation failure.
                    guard
                        COpenSSL.HMAC(
                            algorithm.pointer, keyPointer, Int32(keyCount),
                            messagePointer.assumingMemoryBound(to: UInt8.self), messageCount,
                            output.baseAddress, &written) != nil,
                        Int(written) == length
                    else {
                        fatalError("HMAC failed; OpenSSL is out of memory or broken")
                    }
                    initialized = length
                }
            }
        }
    }
}

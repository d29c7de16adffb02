import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's DRBG (seeded from the kernel).
public enum SecureRandom {
    /// Returns `count` random bytes.
    ///
    /// Stops the process if OpenSSL cannot produce randomness: that means the system's entropy
    /// source is broken, and continuing would hand out predictable keys and tokens.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "SecureRandom.bytes: invalid count \(count)")
        if count == 0 { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            guard RAND_bytes(buffer.baseAddress, Int32(count)) == 1 else {
                fatalError("RAND_bytes failed; the system's random number generator is unusable")
            }
            initialized = count
        }
    }

    /// Returns a random token: `bytes` random bytes, base64url-encoded without padding.
    ///
    /// The default 32 bytes (256 bits) gives a 43-character token, safe to put in URLs and headers.
    public static func token(bytes count: Int = 32) -> String {
        Base64URL.encode(bytes(count))
    }
}

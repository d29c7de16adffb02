import COpenSSL

/// HMAC (RFC 2104).
public enum HMAC {
    /// Returns HMAC-SHA-256 of `message` under `key` (32 bytes).
    ///
    /// Any key length is accepted, as RFC 2104 allows; keys longer than the 64-byte block are
    /// hashed first. Callers that need a minimum strength (JWT's HS256 requires 32 bytes,
    /// RFC 7518 section 3.2) check it themselves.
    public static func sha256(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        withBytes(key) { keyPointer, keyCount in
            withBytes(message) { messagePointer, messageCount in
                // HMAC()'s key length is an Int32; a key that large is a programming error.
                precondition(keyCount <= Int(Int32.max), "HMAC key too large")
                return [UInt8](unsafeUninitializedCapacity: SHA256.byteCount) { output, initialized in
                    var written: UInt32 = 0
                    // The one-shot HMAC() is not deprecated in OpenSSL 3 (only HMAC_CTX is) and
                    // fails only on allocation failure.
                    guard
                        COpenSSL.HMAC(
                            FetchedAlgorithm.sha256.pointer, keyPointer, Int32(keyCount),
                            messagePointer.assumingMemoryBound(to: UInt8.self), messageCount,
                            output.baseAddress, &written) != nil,
                        Int(written) == SHA256.byteCount
                    else {
                        fatalError("HMAC-SHA-256 failed; OpenSSL is out of memory or broken")
                    }
                    initialized = SHA256.byteCount
                }
            }
        }
    }
}

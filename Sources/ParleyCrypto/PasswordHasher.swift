import COpenSSL

/// Password hashing with scrypt (RFC 7914) through OpenSSL's `EVP_PBE_scrypt`.
///
/// Hashes are stored in a PHC-style string that carries its own parameters and salt:
///
///     $scrypt$ln=15,r=8,p=1$<salt>$<hash>
///
/// where `ln` is log2(N) and salt and hash are standard base64 without padding (the PHC
/// string format's "B64"). Verification uses the parameters in the string, so the defaults can
/// be raised later without invalidating stored hashes; `needsRehash` tells the caller when to
/// re-hash on the next successful login.
///
/// Each hash with the default parameters allocates about 32 MiB and takes roughly 0.1-0.15 s of
/// one core (measured with OpenSSL 3.0 on the 2-core build box), so callers should bound how many
/// run at once (and rate-limit login attempts) and run them off the event loop.
public enum PasswordHasher {
    /// Random salt length: 128 bits, so salts never repeat in practice (RFC 7914 section 11
    /// leaves the size to the application; 16 bytes is the common choice).
    public static let saltByteCount = 16
    /// Derived key length: 256 bits, matching the strength of the salt and of SHA-256.
    public static let hashByteCount = 32

    /// Hashes `password` with a fresh random salt and returns the encoded string.
    public static func hash(password: String, parameters: Parameters = .default) throws(CryptoError) -> String {
        let salt = SecureRandom.bytes(saltByteCount)
        let derived = try scryptRaw(
            password: password.utf8, salt: salt, n: parameters.n,
            r: parameters.r, p: parameters.p, length: hashByteCount)
        return EncodedHash(parameters: parameters, salt: salt, hash: derived).encoded
    }

    /// Returns whether `password` matches `encoded`.
    ///
    /// Returns `false`, never throws, for malformed strings and for stored parameters outside
    /// `Parameters`' limits, so a corrupted or hostile row cannot make verification allocate
    /// gigabytes or spin for minutes. The final comparison runs in constant time.
    public static func verify(password: String, encoded: String) -> Bool {
        guard let stored = EncodedHash(parsing: encoded),
            let derived = try? scryptRaw(
                password: password.utf8, salt: stored.salt,
                n: stored.parameters.n, r: stored.parameters.r,
                p: stored.parameters.p, length: stored.hash.count)
        else { return false }
        return ConstantTime.equals(derived, stored.hash)
    }

    /// Returns whether `encoded` should be replaced by a fresh hash made with `parameters`:
    /// it is malformed, or was made with different parameters or lengths.
    public static func needsRehash(encoded: String, parameters: Parameters = .default) -> Bool {
        guard let stored = EncodedHash(parsing: encoded) else { return true }
        return stored.parameters != parameters
            || stored.salt.count != saltByteCount
            || stored.hash.count != hashByteCount
    }

    /// Raw scrypt: derives `length` bytes from `password` and `salt` with cost `n` (a power of
    /// two), block size `r` and parallelism `p`.
    ///
    /// Exposed for known-answer tests (RFC 7914 section 12) and for callers that need a KDF.
    /// The same limits as stored hashes apply (see `Parameters`).
    ///
    /// - Throws: `CryptoError.invalidParameters` outside the limits;
    ///   `CryptoError.keyDerivationFailed` if OpenSSL fails (allocation failure).
    public static func scryptRaw(
        password: some Collection<UInt8>, salt: some Collection<UInt8>,
        n: Int, r: Int, p: Int, length: Int
    ) throws(CryptoError) -> [UInt8] {
        try Parameters.validate(n: n, r: r, p: p)
        guard (1...Parameters.maxOutputByteCount).contains(length) else {
            throw .invalidParameters("output length must be 1...\(Parameters.maxOutputByteCount)")
        }
        let maxMemory = Parameters.memoryByteCount(n: n, r: r, p: p) + Parameters.memorySlack
        let derived = withBytes(password) { passwordPointer, passwordCount in
            withBytes(salt) { saltPointer, saltCount in
                [UInt8](unsafeUninitializedCapacity: length) { output, initialized in
                    // maxmem must cover OpenSSL's own estimate (128*r*(N+2) + 128*r*p) or the call
                    // fails; its built-in default of 32 MiB is just short of N=2^15, r=8.
                    let status = EVP_PBE_scrypt(
                        passwordPointer.assumingMemoryBound(to: CChar.self), passwordCount,
                        saltPointer.assumingMemoryBound(to: UInt8.self), saltCount,
                        UInt64(n), UInt64(r), UInt64(p), UInt64(maxMemory),
                        output.baseAddress, length)
                    initialized = status == 1 ? length : 0
                }
            }
        }
        guard derived.count == length else { throw .keyDerivationFailed }
        return derived
    }
}

import COpenSSL

/// RSASSA-PKCS1-v1_5 with SHA-256 (RS256, RFC 7518 section 3.3), as Google's OAuth 2.0 service-account
/// assertions need: the key comes from a service-account JSON file (`private_key`, PEM PKCS #8).
public enum RSA {
    /// RFC 7518 section 3.3: keys of at least 2048 bits.
    public static let minimumKeyBits = 2048

    /// A private key. Immutable once loaded (see `P256.SigningKey` on sharing an `EVP_PKEY` between threads).
    public final class SigningKey: @unchecked Sendable {
        let key: OpaquePointer

        init(owning key: OpaquePointer) {
            self.key = key
        }

        deinit { EVP_PKEY_free(key) }

        /// Loads a PEM private key (`BEGIN PRIVATE KEY`, PKCS #8, as in service-account files; `BEGIN RSA PRIVATE
        /// KEY` too). Anything but an RSA key of at least 2048 bits is refused.
        public convenience init(pem: String) throws(CryptoError) {
            guard let key = PEMKeys.read(pem, { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) }) else {
                throw .invalidKeyFormat("not a PEM private key")
            }
            guard let problem = RSA.problem(key) else {
                self.init(owning: key)
                return
            }
            EVP_PKEY_free(key)
            throw .invalidKeyFormat(problem)
        }

        /// A fresh random key of `bits` bits (tests and tools).
        public static func generate(bits: Int = 2048) throws(CryptoError) -> SigningKey {
            guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw .keyGenerationFailed }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
                EVP_PKEY_generate(context, &key) == 1, let key
            else { throw .keyGenerationFailed }
            return SigningKey(owning: key)
        }

        /// The key as PEM PKCS #8 (`BEGIN PRIVATE KEY`), as service-account files hold it.
        public var pem: String {
            PEMKeys.write { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
        }

        /// The matching public key.
        public var verifyingKey: VerifyingKey {
            // A public key this library just wrote always reads back.
            try! VerifyingKey(pem: PEMKeys.write { bio in PEM_write_bio_PUBKEY(bio, key) })
        }

        /// The RSASSA-PKCS1-v1_5 SHA-256 signature of `message` (as long as the modulus).
        public func sign(_ message: some Collection<UInt8>) throws(CryptoError) -> [UInt8] {
            guard let context = EVP_MD_CTX_new() else { throw .signingFailed }
            defer { EVP_MD_CTX_free(context) }
            // PKCS #1 v1.5 padding is OpenSSL's default for RSA signatures.
            guard EVP_DigestSignInit(context, nil, FetchedAlgorithm.sha256.pointer, nil, key) == 1 else {
                throw .signingFailed
            }
            var signature = [UInt8](repeating: 0, count: Int(EVP_PKEY_get_size(key)))
            var length = signature.count
            let signed = withBytes(message) { pointer, count in
                EVP_DigestSign(context, &signature, &length, pointer.assumingMemoryBound(to: UInt8.self), count) == 1
            }
            guard signed else {
                ERR_clear_error()
                throw .signingFailed
            }
            return Array(signature[..<length])
        }
    }

    /// A public key, for verifying signatures (tests; Google verifies Parley's).
    public final class VerifyingKey: @unchecked Sendable {
        let key: OpaquePointer

        init(owning key: OpaquePointer) {
            self.key = key
        }

        deinit { EVP_PKEY_free(key) }

        /// Loads a PEM public key (`BEGIN PUBLIC KEY`, SubjectPublicKeyInfo).
        public convenience init(pem: String) throws(CryptoError) {
            guard let key = PEMKeys.read(pem, { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }) else {
                throw .invalidKeyFormat("not a PEM public key")
            }
            guard let problem = RSA.problem(key) else {
                self.init(owning: key)
                return
            }
            EVP_PKEY_free(key)
            throw .invalidKeyFormat(problem)
        }

        public var pem: String {
            PEMKeys.write { bio in PEM_write_bio_PUBKEY(bio, key) }
        }

        /// Whether `signature` is this key's RSASSA-PKCS1-v1_5 SHA-256 signature of `message`.
        public func verify(signature: [UInt8], for message: some Collection<UInt8>) -> Bool {
            guard let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestVerifyInit(context, nil, FetchedAlgorithm.sha256.pointer, nil, key) == 1 else {
                return false
            }
            let valid = withBytes(message) { pointer, count in
                EVP_DigestVerify(
                    context, signature, signature.count, pointer.assumingMemoryBound(to: UInt8.self), count) == 1
            }
            ERR_clear_error() // a bad signature leaves an error on the thread's queue
            return valid
        }
    }

    /// Why `key` cannot be used for RS256, or nil when it can.
    private static func problem(_ key: OpaquePointer) -> String? {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else { return "not an RSA key" }
        guard EVP_PKEY_get_bits(key) >= minimumKeyBits else { return "an RSA key shorter than 2048 bits" }
        return nil
    }
}

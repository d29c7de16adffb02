import COpenSSL

/// ECDSA over NIST P-256 with SHA-256 (ES256, RFC 7518 section 3.4), as APNs provider tokens need: a `.p8` key
/// from Apple (PEM, PKCS #8) signs, and the signature travels as the raw 64-byte `r || s`, not DER.
public enum P256 {
    /// Length of a raw signature: r and s, 32 bytes each, big-endian, left-padded with zeros.
    public static let rawSignatureByteCount = 64
    static let scalarByteCount = 32

    /// A private key. Immutable once loaded: OpenSSL 3 allows one `EVP_PKEY` to be used for signing from several
    /// threads at once (each operation has its own `EVP_MD_CTX`), hence `@unchecked Sendable`.
    public final class SigningKey: @unchecked Sendable {
        let key: OpaquePointer

        init(owning key: OpaquePointer) {
            self.key = key
        }

        deinit { EVP_PKEY_free(key) }

        /// Loads a PEM private key (`-----BEGIN PRIVATE KEY-----`, PKCS #8, as Apple's `.p8` files; the SEC 1
        /// `BEGIN EC PRIVATE KEY` form is accepted too). Anything but a P-256 EC key is refused.
        public convenience init(pem: String) throws(CryptoError) {
            guard let key = PEMKeys.read(pem, { bio in PEM_read_bio_PrivateKey(bio, nil, nil, nil) }) else {
                throw .invalidKeyFormat("not a PEM private key")
            }
            guard isP256(key) else {
                EVP_PKEY_free(key)
                throw .invalidKeyFormat("not a P-256 (prime256v1) EC key")
            }
            self.init(owning: key)
        }

        /// A fresh random key (tests and tools; APNs keys come from Apple).
        public static func generate() throws(CryptoError) -> SigningKey {
            guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .keyGenerationFailed }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
                EVP_PKEY_generate(context, &key) == 1, let key
            else { throw .keyGenerationFailed }
            return SigningKey(owning: key)
        }

        /// The key as PEM PKCS #8 (`BEGIN PRIVATE KEY`), the format of Apple's `.p8` files.
        public var pem: String {
            PEMKeys.write { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
        }

        /// The matching public key.
        public var verifyingKey: VerifyingKey {
            // Round trip through the public PEM: it drops the private scalar and needs no deprecated EC_KEY calls.
            let pem = PEMKeys.write { bio in PEM_write_bio_PUBKEY(bio, key) }
            // A public key this library just wrote always reads back.
            return try! VerifyingKey(pem: pem)
        }

        /// Signs SHA-256(`message`) and returns the raw `r || s` (64 bytes), as JWS wants (RFC 7518 section 3.4).
        public func sign(_ message: some Collection<UInt8>) throws(CryptoError) -> [UInt8] {
            guard let context = EVP_MD_CTX_new() else { throw .signingFailed }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestSignInit(context, nil, FetchedAlgorithm.sha256.pointer, nil, key) == 1 else {
                throw .signingFailed
            }
            // A DER ECDSA-Sig-Value of P-256 is at most 72 bytes (two 33-byte INTEGERs and their headers).
            var der = [UInt8](repeating: 0, count: 80)
            var length = der.count
            let signed = withBytes(message) { pointer, count in
                EVP_DigestSign(context, &der, &length, pointer.assumingMemoryBound(to: UInt8.self), count) == 1
            }
            guard signed, let raw = ECDSASignature.raw(fromDER: der[..<length]) else { throw .signingFailed }
            return raw
        }
    }

    /// A public key, for verifying signatures (tests, and the mock APNs' counterpart in Swift).
    public final class VerifyingKey: @unchecked Sendable {
        let key: OpaquePointer

        init(owning key: OpaquePointer) {
            self.key = key
        }

        deinit { EVP_PKEY_free(key) }

        /// Loads a PEM public key (`-----BEGIN PUBLIC KEY-----`, SubjectPublicKeyInfo).
        public convenience init(pem: String) throws(CryptoError) {
            guard let key = PEMKeys.read(pem, { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }) else {
                throw .invalidKeyFormat("not a PEM public key")
            }
            guard isP256(key) else {
                EVP_PKEY_free(key)
                throw .invalidKeyFormat("not a P-256 (prime256v1) EC key")
            }
            self.init(owning: key)
        }

        public var pem: String {
            PEMKeys.write { bio in PEM_write_bio_PUBKEY(bio, key) }
        }

        /// Whether `signature` (raw `r || s`, 64 bytes) is this key's signature of SHA-256(`message`).
        public func verify(signature: [UInt8], for message: some Collection<UInt8>) -> Bool {
            guard let der = ECDSASignature.der(fromRaw: signature) else { return false }
            guard let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestVerifyInit(context, nil, FetchedAlgorithm.sha256.pointer, nil, key) == 1 else {
                return false
            }
            return withBytes(message) { pointer, count in
                EVP_DigestVerify(context, der, der.count, pointer.assumingMemoryBound(to: UInt8.self), count) == 1
            }
        }
    }

    private static func isP256(_ key: OpaquePointer) -> Bool {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return false }
        let group = String(decoding: name[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return group == "prime256v1" || group == "P-256"
    }
}

/// Conversions between the two encodings of an ECDSA signature over P-256: DER `ECDSA-Sig-Value ::= SEQUENCE
/// { r INTEGER, s INTEGER }` (RFC 3279 section 2.2.3, what OpenSSL produces) and the fixed-length `r || s` of
/// JWS (RFC 7518 section 3.4). Strict DER: minimal lengths and minimal, non-negative integers.
public enum ECDSASignature {
    /// `r || s`, each left-padded to 32 bytes, or nil when `der` is not a strict DER signature with both values
    /// in 1 ..< 2^256.
    public static func raw(fromDER der: some Collection<UInt8>) -> [UInt8]? {
        let bytes = Array(der)
        // SEQUENCE with a short-form length (a P-256 signature is at most 72 bytes, so never the long form).
        guard bytes.count >= 2, bytes[0] == 0x30, bytes[1] < 0x80, Int(bytes[1]) == bytes.count - 2 else { return nil }
        var index = 2
        guard let r = integer(bytes, &index), let s = integer(bytes, &index), index == bytes.count else { return nil }
        return pad(r) + pad(s)
    }

    /// The DER encoding of a raw `r || s` (64 bytes), or nil for another length or a zero value.
    public static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == P256.rawSignatureByteCount else { return nil }
        let r = encodeInteger(raw[0..<32])
        let s = encodeInteger(raw[32..<64])
        guard let r, let s else { return nil }
        let body = r + s
        return [0x30, UInt8(body.count)] + body
    }

    /// Reads one INTEGER's magnitude (without its sign byte).
    private static func integer(_ bytes: [UInt8], _ index: inout Int) -> ArraySlice<UInt8>? {
        guard index + 2 <= bytes.count, bytes[index] == 0x02, bytes[index + 1] < 0x80 else { return nil }
        let length = Int(bytes[index + 1])
        let start = index + 2
        guard length > 0, start + length <= bytes.count else { return nil }
        var value = bytes[start..<(start + length)]
        index = start + length
        if value.first! & 0x80 != 0 { return nil } // negative
        if value.first! == 0 {
            // A leading zero is allowed only to keep a set high bit positive (minimal encoding, X.690 8.3.2).
            guard value.count > 1, value[value.startIndex + 1] & 0x80 != 0 else { return nil }
            value = value.dropFirst()
        }
        guard value.count <= P256.scalarByteCount else { return nil }
        return value
    }

    private static func pad(_ value: ArraySlice<UInt8>) -> [UInt8] {
        [UInt8](repeating: 0, count: P256.scalarByteCount - value.count) + value
    }

    private static func encodeInteger(_ value: ArraySlice<UInt8>) -> [UInt8]? {
        guard let first = value.firstIndex(where: { $0 != 0 }) else { return nil } // zero is never a valid r or s
        var magnitude = Array(value[first...])
        if magnitude[0] & 0x80 != 0 { magnitude.insert(0, at: 0) }
        return [0x02, UInt8(magnitude.count)] + magnitude
    }
}

import COpenSSL

/// AES-256-GCM authenticated encryption (NIST SP 800-38D), used to store application secrets
/// encrypted under a master key.
///
/// `seal` returns `nonce (12 bytes) || ciphertext || tag (16 bytes)`. Every call draws a fresh
/// random 96-bit nonce; with random nonces NIST SP 800-38D section 8.3 limits one key to 2^32
/// seals, far beyond what a secrets table needs.
public struct AESGCM: Sendable {
    /// Key length in bytes (AES-256).
    public static let keyByteCount = 32
    /// Nonce length in bytes: 96 bits, the length GCM is designed for (SP 800-38D section 5.2.1.1).
    public static let nonceByteCount = 12
    /// Authentication tag length in bytes: the full 128 bits.
    public static let tagByteCount = 16

    /// Encrypts and authenticates `plaintext`, also authenticating (but not encrypting)
    /// `associatedData`, which must be supplied again to `open`.
    ///
    /// - Throws: `CryptoError.invalidKeyLength` unless `key` is 32 bytes.
    public static func seal(
        plaintext: [UInt8], key: [UInt8], associatedData: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        try seal(
            plaintext: plaintext, key: key, nonce: SecureRandom.bytes(nonceByteCount),
            associatedData: associatedData)
    }

    /// Verifies and decrypts the output of `seal`.
    ///
    /// - Throws: `CryptoError.authenticationFailed` if the input is truncated, was modified, or
    ///   was sealed with a different key or associated data; `CryptoError.invalidKeyLength`
    ///   unless `key` is 32 bytes.
    public static func open(
        _ sealed: [UInt8], key: [UInt8], associatedData: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        try checkKey(key)
        guard sealed.count >= nonceByteCount + tagByteCount else { throw .authenticationFailed }
        let nonce = sealed[..<nonceByteCount]
        let ciphertext = sealed[nonceByteCount..<(sealed.count - tagByteCount)]
        var tag = Array(sealed[(sealed.count - tagByteCount)...])

        let context = try CipherContext()
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        let authentic = withBytes(key) { keyPointer, _ in
            withBytes(nonce) { noncePointer, _ in
                guard
                    EVP_DecryptInit_ex2(
                        context.pointer, FetchedAlgorithm.aes256GCM.pointer,
                        keyPointer.assumingMemoryBound(to: UInt8.self),
                        noncePointer.assumingMemoryBound(to: UInt8.self), nil) == 1
                else { return false }
                guard context.authenticate(associatedData, decrypting: true) else { return false }
                guard context.update(ciphertext, into: &plaintext, decrypting: true) else { return false }
                guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), &tag) == 1
                else { return false }
                // The tag is checked here; any mismatch makes DecryptFinal fail.
                var finalLength: Int32 = 0
                var scratch = [UInt8](repeating: 0, count: 16)
                return EVP_DecryptFinal_ex(context.pointer, &scratch, &finalLength) == 1
            }
        }
        guard authentic else {
            // Never let unauthenticated plaintext linger in memory.
            OPENSSL_cleanse(&plaintext, plaintext.count)
            throw .authenticationFailed
        }
        return plaintext
    }

    /// `seal` with a caller-chosen nonce, for known-answer tests. Reusing a nonce under the same
    /// key destroys GCM's confidentiality and authenticity, so this is not public.
    static func seal(
        plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        try checkKey(key)
        precondition(nonce.count == nonceByteCount, "AES-GCM nonce must be 12 bytes")
        let context = try CipherContext()
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        let succeeded = withBytes(key) { keyPointer, _ in
            withBytes(nonce) { noncePointer, _ in
                guard
                    EVP_EncryptInit_ex2(
                        context.pointer, FetchedAlgorithm.aes256GCM.pointer,
                        keyPointer.assumingMemoryBound(to: UInt8.self),
                        noncePointer.assumingMemoryBound(to: UInt8.self), nil) == 1
                else { return false }
                guard context.authenticate(associatedData, decrypting: false) else { return false }
                guard context.update(plaintext[...], into: &ciphertext, decrypting: false) else { return false }
                var finalLength: Int32 = 0
                var scratch = [UInt8](repeating: 0, count: 16)
                guard EVP_EncryptFinal_ex(context.pointer, &scratch, &finalLength) == 1, finalLength == 0
                else { return false }
                return EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), &tag) == 1
            }
        }
        guard succeeded else { throw .encryptionFailed }
        return nonce + ciphertext + tag
    }

    private static func checkKey(_ key: [UInt8]) throws(CryptoError) {
        guard key.count == keyByteCount else {
            throw .invalidKeyLength(expected: keyByteCount, actual: key.count)
        }
    }
}

/// Owns one `EVP_CIPHER_CTX` and frees it (which also wipes the key schedule) on every path.
private final class CipherContext {
    let pointer: OpaquePointer

    init() throws(CryptoError) {
        guard let pointer = EVP_CIPHER_CTX_new() else { throw .encryptionFailed }
        self.pointer = pointer
    }

    deinit {
        EVP_CIPHER_CTX_free(pointer)
    }

    /// Feeds additional authenticated data (an update with a NULL output buffer).
    func authenticate(_ data: [UInt8], decrypting: Bool) -> Bool {
        guard !data.isEmpty else { return true }
        return data.withUnsafeBufferPointer { buffer in
            guard buffer.count <= Int(Int32.max) else { return false }
            var written: Int32 = 0
            let status =
                decrypting
                ? EVP_DecryptUpdate(pointer, nil, &written, buffer.baseAddress, Int32(buffer.count))
                : EVP_EncryptUpdate(pointer, nil, &written, buffer.baseAddress, Int32(buffer.count))
            return status == 1
        }
    }

    /// Encrypts or decrypts `input` into `output`, which has the same length (GCM is a stream mode).
    func update(_ input: ArraySlice<UInt8>, into output: inout [UInt8], decrypting: Bool) -> Bool {
        guard !input.isEmpty else { return true }
        return input.withUnsafeBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                guard inBuffer.count <= Int(Int32.max) else { return false }
                var written: Int32 = 0
                let status =
                    decrypting
                    ? EVP_DecryptUpdate(
                        pointer, outBuffer.baseAddress, &written, inBuffer.baseAddress,
                        Int32(inBuffer.count))
                    : EVP_EncryptUpdate(
                        pointer, outBuffer.baseAddress, &written, inBuffer.baseAddress,
                        Int32(inBuffer.count))
                return status == 1 && Int(written) == inBuffer.count
            }
        }
    }
}

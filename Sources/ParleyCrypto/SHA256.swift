import COpenSSL

/// SHA-256 (FIPS 180-4).
public enum SHA256 {
    /// Digest length in bytes.
    public static let byteCount = 32

    /// Returns the SHA-256 digest of `data`.
    public static func hash(_ data: some Collection<UInt8>) -> [UInt8] {
        Digest.hash(data, algorithm: FetchedAlgorithm.sha256, length: byteCount)
    }

    /// An incremental SHA-256 for data that arrives in pieces, such as a streamed upload.
    ///
    /// Noncopyable so the OpenSSL context has exactly one owner: it is freed in `deinit`, and
    /// `finalize()` consumes the hasher so it cannot be updated afterwards.
    ///
    /// ```swift
    /// var hasher = SHA256.Hasher()
    /// hasher.update(chunk1)
    /// hasher.update(chunk2)
    /// let digest = hasher.finalize()
    /// ```
    public struct Hasher: ~Copyable, @unchecked Sendable {
        // Owned exclusively by this value (it cannot be copied), so sending it to another
        // thread moves the context along with it.
        private let context: OpaquePointer

        public init() {
            guard let context = EVP_MD_CTX_new() else {
                fatalError("EVP_MD_CTX_new failed; out of memory")
            }
            guard EVP_DigestInit_ex(context, FetchedAlgorithm.sha256.pointer, nil) == 1 else {
                EVP_MD_CTX_free(context)
                fatalError("EVP_DigestInit_ex(SHA-256) failed; OpenSSL is broken")
            }
            self.context = context
        }

        deinit {
            EVP_MD_CTX_free(context)
        }

        /// Feeds raw bytes into the hash.
        public mutating func update(_ buffer: UnsafeRawBufferPointer) {
            guard let base = buffer.baseAddress, buffer.count > 0 else { return }
            guard EVP_DigestUpdate(context, base, buffer.count) == 1 else {
                fatalError("EVP_DigestUpdate failed; OpenSSL is broken")
            }
        }

        /// Feeds a collection of bytes into the hash.
        public mutating func update(_ bytes: some Collection<UInt8>) {
            withBytes(bytes) { pointer, count in
                update(UnsafeRawBufferPointer(start: pointer, count: count))
            }
        }

        /// Returns the digest of everything fed so far and releases the hasher.
        public consuming func finalize() -> [UInt8] {
            [UInt8](unsafeUninitializedCapacity: SHA256.byteCount) { output, initialized in
                var written: UInt32 = 0
                guard EVP_DigestFinal_ex(context, output.baseAddress, &written) == 1,
                    Int(written) == SHA256.byteCount
                else {
                    fatalError("EVP_DigestFinal_ex failed; OpenSSL is broken")
                }
                initialized = SHA256.byteCount
            }
        }
    }
}

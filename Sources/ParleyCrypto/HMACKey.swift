import COpenSSL

/// HMAC-SHA-256 under one fixed key, for hot paths that authenticate many messages with it (signed download
/// URLs, token checks). The inner and outer hash states after absorbing `key ⊕ ipad` / `key ⊕ opad` are computed
/// once; each MAC copies them and hashes only the message (RFC 2104). OpenSSL's one-shot `HMAC()` fetches and
/// sets up a MAC context on every call, which costs several times the hashing itself for short messages.
public final class HMACKey: @unchecked Sendable {
    // Read-only after init (copied from, never updated), so sharing between threads is safe.
    private let inner: OpaquePointer
    private let outer: OpaquePointer

    public init(_ key: some Collection<UInt8>) {
        var block = [UInt8](repeating: 0, count: 64)
        let keyBytes = Array(key)
        let normalized = keyBytes.count > 64 ? SHA256.hash(keyBytes) : keyBytes
        for (index, byte) in normalized.enumerated() { block[index] = byte }
        inner = Self.context(absorbing: block.map { $0 ^ 0x36 })
        outer = Self.context(absorbing: block.map { $0 ^ 0x5C })
    }

    deinit {
        EVP_MD_CTX_free(inner)
        EVP_MD_CTX_free(outer)
    }

    /// HMAC-SHA-256 of `message`; equal to `HMAC.sha256(key:message:)` with this key.
    public func authenticate(_ message: some Collection<UInt8>) -> [UInt8] {
        guard let work = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed; out of memory") }
        defer { EVP_MD_CTX_free(work) }
        var digest = [UInt8](repeating: 0, count: SHA256.byteCount)
        var length: UInt32 = 0
        let ok =
            withBytes(message) { pointer, count in
                EVP_MD_CTX_copy_ex(work, inner) == 1 && EVP_DigestUpdate(work, pointer, count) == 1
                    && EVP_DigestFinal_ex(work, &digest, &length) == 1
            } && EVP_MD_CTX_copy_ex(work, outer) == 1 && EVP_DigestUpdate(work, digest, digest.count) == 1
            && EVP_DigestFinal_ex(work, &digest, &length) == 1
        guard ok, Int(length) == SHA256.byteCount else { fatalError("HMAC-SHA-256 failed; OpenSSL is broken") }
        return digest
    }

    /// HMAC-SHA-256 of `message` written to `digest` (at least 32 bytes), allocating nothing in Swift: for checks on
    /// every request (signed download URLs).
    public func authenticate(_ message: UnsafeRawBufferPointer, into digest: UnsafeMutableRawBufferPointer) {
        precondition(digest.count >= SHA256.byteCount, "the digest buffer holds 32 bytes")
        guard let work = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed; out of memory") }
        defer { EVP_MD_CTX_free(work) }
        let out = digest.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var length: UInt32 = 0
        let ok =
            EVP_MD_CTX_copy_ex(work, inner) == 1 && EVP_DigestUpdate(work, message.baseAddress, message.count) == 1
            && EVP_DigestFinal_ex(work, out, &length) == 1
            && EVP_MD_CTX_copy_ex(work, outer) == 1 && EVP_DigestUpdate(work, out, SHA256.byteCount) == 1
            && EVP_DigestFinal_ex(work, out, &length) == 1
        guard ok, Int(length) == SHA256.byteCount else { fatalError("HMAC-SHA-256 failed; OpenSSL is broken") }
    }

    private static func context(absorbing block: [UInt8]) -> OpaquePointer {
        guard let context = EVP_MD_CTX_new(),
            EVP_DigestInit_ex(context, FetchedAlgorithm.sha256.pointer, nil) == 1,
            EVP_DigestUpdate(context, block, block.count) == 1
        else {
            fatalError("SHA-256 context setup failed; OpenSSL is broken")
        }
        return context
    }
}

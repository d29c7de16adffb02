import COpenSSL

/// One-shot message digests shared by `SHA256` and `SHA1`.
enum Digest {
    static func hash(_ data: some Collection<UInt8>, algorithm: FetchedAlgorithm, length: Int) -> [UInt8] {
        withBytes(data) { pointer, count in
            [UInt8](unsafeUninitializedCapacity: length) { output, initialized in
                var written: UInt32 = 0
                // EVP_Digest only fails on allocation failure; there is no bad input for a digest.
                guard EVP_Digest(pointer, count, output.baseAddress, &written, algorithm.pointer, nil) == 1,
                    Int(written) == length
                else {
                    fatalError("EVP_Digest failed; OpenSSL is out of memory or broken")
                }
                initialized = length
            }
        }
    }
}

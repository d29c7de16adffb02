import COpenSSL

/// Reading and writing PEM keys through OpenSSL's memory BIOs, for every key type (P-256, RSA).
enum PEMKeys {
    /// The key `read` parses from `pem`, or nil (empty or oversized input, or not a key of that form).
    static func read(_ pem: String, _ read: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
        let bytes = Array(pem.utf8)
        guard !bytes.isEmpty, bytes.count < 1 << 20 else { return nil }
        return bytes.withUnsafeBytes { buffer -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            let key = read(bio)
            // A failed parse leaves errors on the thread's queue; later unrelated calls must not see them.
            ERR_clear_error()
            return key
        }
    }

    /// What `write` writes, as text.
    static func write(_ write: (OpaquePointer) -> Int32) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { fatalError("OpenSSL is out of memory") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { fatalError("OpenSSL could not write a PEM key") }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while true {
            let n = BIO_read(bio, &chunk, Int32(chunk.count))
            if n <= 0 { break }
            out += chunk[..<Int(n)]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

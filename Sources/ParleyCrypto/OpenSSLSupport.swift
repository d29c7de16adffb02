import COpenSSL

/// An algorithm object fetched once from OpenSSL's default provider.
///
/// OpenSSL 3.0 re-fetches an algorithm on every init when given the legacy `EVP_sha256()`-style
/// constants, which takes a lock each time; fetching once and sharing the immutable,
/// reference-counted object avoids that. Fetched algorithm objects are read-only and safe to share
/// between threads, hence `@unchecked Sendable`. They live for the whole process.
final class FetchedAlgorithm: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    static func digest(_ name: String) -> FetchedAlgorithm {
        guard let md = EVP_MD_fetch(nil, name, nil) else {
            fatalError("OpenSSL's default provider has no digest \(name); the installation is broken")
        }
        return FetchedAlgorithm(md)
    }

    static func cipher(_ name: String) -> FetchedAlgorithm {
        guard let cipher = EVP_CIPHER_fetch(nil, name, nil) else {
            fatalError("OpenSSL's default provider has no cipher \(name); the installation is broken")
        }
        return FetchedAlgorithm(cipher)
    }

    // Globals are initialised lazily and exactly once (swift_once), so this is thread-safe.
    static let sha1 = digest("SHA1")
    static let sha256 = digest("SHA2-256")
    static let aes256GCM = cipher("AES-256-GCM")
}

/// A never-freed byte that empty inputs point at: several OpenSSL entry points treat a NULL
/// pointer as an error even when the length is zero, and an empty Swift buffer has a nil base
/// address. Nothing ever writes through it, hence `@unchecked Sendable`.
private final class EmptyInput: @unchecked Sendable {
    let pointer: UnsafeRawPointer

    private init() {
        let byte = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
        byte.storeBytes(of: 0, as: UInt8.self)
        pointer = UnsafeRawPointer(byte)
    }

    static let shared = EmptyInput()
}

/// Calls `body` with a non-null pointer to the collection's bytes and their count.
///
/// Contiguous collections (arrays, slices, `String.UTF8View` of native strings) are passed
/// without copying; anything else is copied into a temporary array first.
@inline(__always)
func withBytes<C: Collection<UInt8>, R>(
    _ bytes: C, _ body: (UnsafeRawPointer, Int) throws -> R
) rethrows -> R {
    if let result = try bytes.withContiguousStorageIfAvailable({ buffer in
        try body(UnsafeRawPointer(buffer.baseAddress) ?? EmptyInput.shared.pointer, buffer.count)
    }) {
        return result
    }
    return try Array(bytes).withUnsafeBytes { buffer in
        try body(buffer.baseAddress ?? EmptyInput.shared.pointer, buffer.count)
    }
}

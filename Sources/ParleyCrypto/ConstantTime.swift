import COpenSSL

/// Comparisons whose running time does not depend on where the inputs differ.
public enum ConstantTime {
    /// Returns whether `a` and `b` hold the same bytes.
    ///
    /// When the lengths match, every byte is examined (`CRYPTO_memcmp`), so timing reveals
    /// nothing about the position of the first difference. A length mismatch returns `false`
    /// immediately: the lengths of MACs and hashes are public.
    public static func equals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        withBytes(a) { aPointer, aCount in
            withBytes(b) { bPointer, bCount in
                guard aCount == bCount else { return false }
                if aCount == 0 { return true }
                return CRYPTO_memcmp(aPointer, bPointer, aCount) == 0
            }
        }
    }
}

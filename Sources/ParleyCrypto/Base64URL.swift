/// URL-safe base64 (RFC 4648 section 5), used for tokens and JWTs.
public enum Base64URL {
    /// Encodes `bytes` with the URL-safe alphabet and no padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        Base64Codec.url.encode(bytes, padding: false)
    }

    /// Decodes URL-safe base64, with or without padding. Returns `nil` for characters outside
    /// the alphabet (including `+`, `/` and whitespace), wrong padding, or non-canonical
    /// trailing bits.
    public static func decode(_ string: String) -> [UInt8]? {
        Base64Codec.url.decode(string.utf8, padding: .optional)
    }

    /// Decodes unpadded URL-safe base64 of exactly `output.count` bytes into `output`, allocating nothing; false
    /// for any other length, a character outside the alphabet, padding, or non-canonical trailing bits.
    public static func decodeUnpadded(_ ascii: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer)
        -> Bool
    {
        Base64Codec.url.decode(ascii, into: output)
    }

    /// Decodes only the unpadded form, as JWS compact serialisation requires (RFC 7515 section 2).
    static func decodeUnpadded(_ ascii: some Collection<UInt8>) -> [UInt8]? {
        Base64Codec.url.decode(ascii, padding: .forbidden)
    }
}

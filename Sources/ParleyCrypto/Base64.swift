/// Standard base64 (RFC 4648 section 4), as used by HTTP headers such as the WebSocket
/// handshake's `Sec-WebSocket-Key` and `Sec-WebSocket-Accept`.
public enum Base64 {
    /// Encodes `bytes` with the standard alphabet; `padding` appends `=` to a multiple of 4.
    public static func encode(_ bytes: some Collection<UInt8>, padding: Bool = true) -> String {
        Base64Codec.standard.encode(bytes, padding: padding)
    }

    /// Decodes standard base64, with or without padding. Returns `nil` for characters outside
    /// the alphabet (including whitespace), wrong padding, or non-canonical trailing bits.
    public static func decode(_ string: String) -> [UInt8]? {
        Base64Codec.standard.decode(string.utf8, padding: .optional)
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// HS256 JSON Web Tokens in JWS compact serialisation (RFC 7519, RFC 7515, RFC 7518).
///
/// Only HMAC-SHA-256 is supported, and only when the header says exactly `"alg":"HS256"`:
/// accepting whatever algorithm a token names is the classic JWT flaw (`alg: none`). Keys are
/// chosen by the header's `kid`, so signing keys can be rotated while old tokens still verify.
///
/// This type checks integrity only. Expiry, not-before, audience and issuer belong to the caller,
/// which decodes them into its own claims type and compares them with its clock.
public enum JWT {
    /// The only algorithm accepted (RFC 7518 section 3.2).
    public static let algorithm = "HS256"
    /// Minimum key length: RFC 7518 section 3.2 requires a key at least as long as the hash.
    public static let minimumKeyByteCount = 32
    /// Tokens longer than this are refused before any decoding work.
    public static let maxTokenLength = 8192

    /// Signs `claims` and returns `header.payload.signature`.
    ///
    /// The header is `{"alg":"HS256","typ":"JWT"}` plus `header` (typically `["kid": "..."]`;
    /// `verify` requires a `kid`). An `alg` in `header` is ignored. JSON keys are sorted so equal
    /// inputs give equal tokens. `Date` claims are encoded as seconds since 1970 (NumericDate).
    public static func sign(
        header: [String: String] = [:], claims: some Encodable, key: [UInt8]
    ) throws(JWTError) -> String {
        guard key.count >= minimumKeyByteCount else { throw .invalidKey }
        var fields = header
        fields["alg"] = algorithm
        if fields["typ"] == nil { fields["typ"] = "JWT" }
        let signingInput = try Self.signingInput(header: fields, claims: claims)
        let signature = HMAC.sha256(key: key, message: signingInput.utf8)
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Verifies `token` and decodes its claims as `C`.
    ///
    /// Checks, in order: exactly three unpadded base64url parts; a JSON header with
    /// `alg` exactly `HS256` and no `crit`; a `kid` that `keys` maps to a key; the HMAC over the
    /// ASCII `header.payload`, compared in constant time; and finally the claims JSON. Nothing
    /// from the payload is decoded before the signature has been checked.
    public static func verify<C: Decodable>(
        _ token: String, keys: (String) -> [UInt8]?, as type: C.Type = C.self
    ) throws(JWTError) -> C {
        guard token.utf8.count <= maxTokenLength else { throw .malformed }
        // Split on the byte, not the Character: a "." followed by a combining mark is one
        // Character in Swift and would otherwise hide a separator.
        let parts = token.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed }

        guard let headerBytes = Base64URL.decodeUnpadded(parts[0]),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes))
        else { throw .malformed }
        guard header.alg == algorithm else { throw .unsupportedAlgorithm }
        // RFC 7515 section 4.1.11: a recipient must reject critical extensions it does not
        // understand, and this implementation understands none.
        guard header.crit == nil else { throw .malformed }
        guard let kid = header.kid, let key = keys(kid) else { throw .unknownKey }
        guard key.count >= minimumKeyByteCount else { throw .invalidKey }

        guard let signature = Base64URL.decodeUnpadded(parts[2]) else { throw .malformed }
        // The signing input is the encoded header and payload as sent, with the separating dot
        // (RFC 7515 section 5.2 step 8).
        let signingInput = token.utf8[parts[0].startIndex..<parts[1].endIndex]
        let expected = HMAC.sha256(key: key, message: signingInput)
        guard ConstantTime.equals(signature, expected) else { throw .badSignature }

        guard let payload = Base64URL.decodeUnpadded(parts[1]) else { throw .malformed }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode(C.self, from: Data(payload))
        } catch {
            throw .malformed
        }
    }

    /// The JOSE header fields this implementation reads; others are ignored.
    private struct Header: Decodable {
        let alg: String?
        let kid: String?
        let crit: [String]?
    }
}

extension JWT {
    /// `base64url(header JSON) "." base64url(claims JSON)`, keys sorted so equal inputs sign equal bytes.
    static func signingInput(header: [String: String], claims: some Encodable) throws(JWTError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .secondsSince1970
        do {
            return Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        } catch {
            throw .encodingFailed
        }
    }
}

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension JWT {
    /// Signs `claims` with ES256 (ECDSA P-256 + SHA-256, RFC 7518 section 3.4) and returns
    /// `header.payload.signature`, e.g. an APNs provider token: header `{"alg":"ES256","kid":KEY_ID}`, claims
    /// `{"iss":TEAM_ID,"iat":seconds}`. The header is exactly `header` plus `"alg":"ES256"` (no `typ`: APNs'
    /// documented header has none). Keys are sorted so equal inputs give equal signing inputs.
    public static func signES256(header: [String: String], claims: some Encodable, key: P256.SigningKey)
        throws(JWTError) -> String
    {
        var fields = header
        fields["alg"] = "ES256"
        let signingInput = try signingInput(header: fields, claims: claims)
        guard let signature = try? key.sign(signingInput.utf8) else { throw .encodingFailed }
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Checks an ES256 token's signature with `key` and returns its header and claims as JSON bytes (tests and
    /// tools: Parley verifies no ES256 token from clients).
    public static func verifyES256(_ token: String, key: P256.VerifyingKey) throws(JWTError)
        -> (header: [UInt8], claims: [UInt8])
    {
        try verified(token) { signature, signingInput in key.verify(signature: signature, for: signingInput) }
    }

    /// A compact JWS split and decoded, its signature checked by `check` (signature, signing input); header and
    /// claims as JSON bytes. The one parser behind every `verify...` (tests and tools).
    static func verified(
        _ token: String, check: ([UInt8], String.UTF8View.SubSequence) -> Bool
    ) throws(JWTError) -> (header: [UInt8], claims: [UInt8]) {
        guard token.utf8.count <= maxTokenLength else { throw .malformed }
        let parts = token.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64URL.decodeUnpadded(parts[0]),
            let claims = Base64URL.decodeUnpadded(parts[1]), let signature = Base64URL.decodeUnpadded(parts[2])
        else { throw .malformed }
        let signingInput = token.utf8[parts[0].startIndex..<parts[1].endIndex]
        guard check(signature, signingInput) else { throw .badSignature }
        return (header, claims)
    }
}

extension JWT {
    /// Signs `claims` with RS256 (RSASSA-PKCS1-v1_5 SHA-256, RFC 7518 section 3.3) and returns
    /// `header.payload.signature`, e.g. a Google service-account assertion: header `{"alg":"RS256","typ":"JWT",
    /// "kid":PRIVATE_KEY_ID}`, claims `{"iss","scope","aud","iat","exp"}`. Keys are sorted so equal inputs give
    /// equal tokens (PKCS #1 v1.5 signatures are deterministic).
    public static func signRS256(header: [String: String], claims: some Encodable, key: RSA.SigningKey)
        throws(JWTError) -> String
    {
        var fields = header
        fields["alg"] = "RS256"
        if fields["typ"] == nil { fields["typ"] = "JWT" }
        let signingInput = try signingInput(header: fields, claims: claims)
        guard let signature = try? key.sign(signingInput.utf8) else { throw .encodingFailed }
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Checks an RS256 token's signature with `key` and returns its header and claims as JSON bytes (tests and
    /// tools: Parley verifies no RS256 token from clients).
    public static func verifyRS256(_ token: String, key: RSA.VerifyingKey) throws(JWTError)
        -> (header: [UInt8], claims: [UInt8])
    {
        try verified(token) { signature, signingInput in key.verify(signature: signature, for: signingInput) }
    }
}

import ParleyCrypto

/// HS256 keys by `kid`: the first signs, all verify, so a key can be rotated by putting a new one first and
/// dropping the old one once its tokens have expired (24 h for IM tokens).
public struct TokenKeyRing: Sendable {
    public let signingKeyID: String
    let keys: [String: [UInt8]]
    /// Keys tried when a token's signature does not match its kid's key: the previous master key's, during a
    /// master-key rotation (both derive kid `m1`).
    let fallbackKeys: [String: [UInt8]]

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(signingKeyID: String, keys: [String: [UInt8]], fallbackKeys: [String: [UInt8]] = [:]) {
        precondition(keys[signingKeyID] != nil, "the signing key must be in the ring")
        self.signingKeyID = signingKeyID
        self.keys = keys
        self.fallbackKeys = fallbackKeys
    }

    /// `PARLEY_TOKEN_KEYS`: `kid:base64key,kid2:base64key` (keys of at least 32 bytes, base64 or base64url).
    /// Errors name the kid, never the key.
    public init(parsing text: String) throws(Invalid) {
        var keys: [String: [UInt8]] = [:]
        var first: String?
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            guard let colon = entry.firstIndex(of: ":") else {
                throw Invalid(description: "PARLEY_TOKEN_KEYS: an entry has no `kid:` prefix")
            }
            let kid = String(entry[..<colon])
            let encoded = String(entry[entry.index(after: colon)...])
            guard !kid.isEmpty, kid.utf8.count <= 32, kid.utf8.allSatisfy(Validation.isIdentifierByte) else {
                throw Invalid(description: "PARLEY_TOKEN_KEYS: key ids must be 1-32 of [A-Za-z0-9_.@-]")
            }
            guard let key = Base64.decode(encoded) ?? Base64URL.decode(encoded), key.count >= JWT.minimumKeyByteCount
            else {
                throw Invalid(description: "PARLEY_TOKEN_KEYS: key `\(kid)` is not base64 of at least 32 bytes")
            }
            guard keys[kid] == nil else {
                throw Invalid(description: "PARLEY_TOKEN_KEYS: key id `\(kid)` appears twice")
            }
            keys[kid] = key
            if first == nil { first = kid }
        }
        guard let first else { throw Invalid(description: "PARLEY_TOKEN_KEYS is set but lists no key") }
        self.init(signingKeyID: first, keys: keys)
    }

    /// Without `PARLEY_TOKEN_KEYS`: one key derived from the master key, kid `m1`; during a rotation the previous
    /// master key's still verifies.
    public init(derivedFrom masterKey: MasterKey, previous: MasterKey? = nil) {
        self.init(
            signingKeyID: "m1", keys: ["m1": masterKey.derive("parley token key v1")],
            fallbackKeys: previous.map { ["m1": $0.derive("parley token key v1")] } ?? [:])
    }

    var signingKey: [UInt8] { keys[signingKeyID]! }

    func key(for kid: String) -> [UInt8]? { keys[kid] }

    func fallbackKey(for kid: String) -> [UInt8]? { fallbackKeys[kid] }

    var hasFallback: Bool { !fallbackKeys.isEmpty }
}

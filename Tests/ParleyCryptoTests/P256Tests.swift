import Foundation
import ParleyCrypto
import Testing

@Suite("ES256 (ECDSA P-256 + SHA-256)")
struct P256Tests {
    /// RFC 7515 appendix A.3: the public key of the ES256 example, as SubjectPublicKeyInfo PEM.
    static let rfc7515PublicKey = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEf83OJ3D2xF1Bg8vub9tLe1gHMzV7
        6e8Tus9uPHvRVEXH8UTNG72bfocs3+257rn0s2ldbqkLJK2KRiMohYjlrQ==
        -----END PUBLIC KEY-----
        """
    static let rfc7515Token =
        "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"

    @Test func verifiesThePublishedRFC7515Example() throws {
        let key = try P256.VerifyingKey(pem: Self.rfc7515PublicKey)
        let (header, _) = try JWT.verifyES256(Self.rfc7515Token, key: key)
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256"}"#)
        // One flipped bit in the signature fails.
        var tampered = Array(Self.rfc7515Token.utf8)
        tampered[tampered.count - 3] =
            tampered[tampered.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: JWTError.badSignature) {
            try JWT.verifyES256(String(decoding: tampered, as: UTF8.self), key: key)
        }
    }

    @Test func signsAndVerifiesWithAGeneratedKey() throws {
        let key = try P256.SigningKey.generate()
        let message = Array("apns provider token".utf8)
        let signature = try key.sign(message)
        #expect(signature.count == 64)
        #expect(key.verifyingKey.verify(signature: signature, for: message))
        #expect(!key.verifyingKey.verify(signature: signature, for: Array("another message".utf8)))
        #expect(!(try P256.SigningKey.generate()).verifyingKey.verify(signature: signature, for: message))
        // ECDSA is randomised: two signatures differ, both verify.
        let again = try key.sign(message)
        #expect(again != signature)
        #expect(key.verifyingKey.verify(signature: again, for: message))
    }

    @Test func privateKeyRoundTripsThroughPKCS8PEM() throws {
        let key = try P256.SigningKey.generate()
        #expect(key.pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let reloaded = try P256.SigningKey(pem: key.pem)
        let signature = try reloaded.sign(Array("x".utf8))
        #expect(key.verifyingKey.verify(signature: signature, for: Array("x".utf8)))
        #expect(reloaded.verifyingKey.pem == key.verifyingKey.pem)
    }

    @Test func refusesWhatIsNotAP256Key() {
        #expect(throws: CryptoError.self) { try P256.SigningKey(pem: "") }
        #expect(throws: CryptoError.self) {
            try P256.SigningKey(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        }
        // A public key is not a private key.
        #expect(throws: CryptoError.self) { try P256.SigningKey(pem: Self.rfc7515PublicKey) }
        // An Ed25519 private key (RFC 8410 section 10.3) is a valid PKCS #8 key of another kind.
        let ed25519 = """
            -----BEGIN PRIVATE KEY-----
            MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC
            -----END PRIVATE KEY-----
            """
        #expect(throws: CryptoError.self) { try P256.SigningKey(pem: ed25519) }
    }

    @Test func signsAnAPNsStyleJWT() throws {
        struct Claims: Codable { var iss: String; var iat: Int }
        let key = try P256.SigningKey.generate()
        let token = try JWT.signES256(
            header: ["kid": "ABC123DEFG"], claims: Claims(iss: "DEF123GHIJ", iat: 1_700_000_000),
            key: key)
        let (header, claims) = try JWT.verifyES256(token, key: key.verifyingKey)
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        #expect(String(decoding: claims, as: UTF8.self) == #"{"iat":1700000000,"iss":"DEF123GHIJ"}"#)
    }
}

@Suite("ECDSA signature encodings (DER <-> raw r||s)")
struct ECDSASignatureTests {
    static func der(_ r: [UInt8], _ s: [UInt8]) -> [UInt8] {
        let body = [0x02, UInt8(r.count)] + r + [0x02, UInt8(s.count)] + s
        return [0x30, UInt8(body.count)] + body
    }

    @Test func highBitValuesCarryALeadingZeroInDER() throws {
        let r = [UInt8](repeating: 0xff, count: 32)
        let s = [UInt8](repeating: 0x80, count: 32)
        let der = try #require(ECDSASignature.der(fromRaw: r + s))
        #expect(der == Self.der([0] + r, [0] + s))
        #expect(der.count == 72)
        #expect(ECDSASignature.raw(fromDER: der) == r + s)
    }

    @Test func shortValuesArePaddedWithLeadingZeros() throws {
        // r has two leading zero bytes (30 significant bytes), s is 1.
        let r = [0, 0] + [UInt8](repeating: 0x11, count: 30)
        let s = [UInt8](repeating: 0, count: 31) + [1]
        let der = try #require(ECDSASignature.der(fromRaw: r + s))
        #expect(der == Self.der([UInt8](repeating: 0x11, count: 30), [1]))
        #expect(ECDSASignature.raw(fromDER: der) == r + s)
        // A zero byte before a value whose high bit is set after stripping: r = 00 00 80 ...
        let r2 = [0, 0x80] + [UInt8](repeating: 1, count: 30)
        let der2 = try #require(ECDSASignature.der(fromRaw: r2 + s))
        #expect(der2 == Self.der([0, 0x80] + [UInt8](repeating: 1, count: 30), [1]))
        #expect(ECDSASignature.raw(fromDER: der2) == r2 + s)
    }

    @Test func refusesNonStrictDER() {
        let value = [UInt8](repeating: 0x11, count: 32)
        #expect(ECDSASignature.raw(fromDER: Self.der(value, value)) != nil)
        #expect(ECDSASignature.raw(fromDER: Self.der([0] + value, value)) == nil, "needless leading zero")
        #expect(ECDSASignature.raw(fromDER: Self.der([0x80] + value.dropFirst(), value)) == nil, "negative")
        #expect(ECDSASignature.raw(fromDER: Self.der([1] + value, value)) == nil, "33 significant bytes")
        #expect(ECDSASignature.raw(fromDER: Self.der([], value)) == nil, "empty integer")
        #expect(ECDSASignature.raw(fromDER: Self.der(value, value) + [0]) == nil, "trailing byte")
        #expect(ECDSASignature.raw(fromDER: Array(Self.der(value, value).dropLast())) == nil, "truncated")
        var wrongTag = Self.der(value, value)
        wrongTag[0] = 0x31
        #expect(ECDSASignature.raw(fromDER: wrongTag) == nil)
        #expect(ECDSASignature.raw(fromDER: [0x30, 0x00]) == nil)
        #expect(ECDSASignature.raw(fromDER: []) == nil)
    }

    @Test func refusesZeroOrMisSizedRawSignatures() {
        #expect(ECDSASignature.der(fromRaw: [UInt8](repeating: 1, count: 63)) == nil)
        #expect(ECDSASignature.der(fromRaw: [UInt8](repeating: 0, count: 32) + [UInt8](repeating: 1, count: 32)) == nil)
        let zeroS = [UInt8](repeating: 1, count: 32) + [UInt8](repeating: 0, count: 32)
        #expect(ECDSASignature.der(fromRaw: zeroS) == nil)
        #expect(!(try! P256.SigningKey.generate()).verifyingKey.verify(signature: zeroS, for: [1]))
    }
}

import Foundation
import ParleyCrypto
import Testing

@Suite struct JWTTests {
    struct Claims: Codable, Equatable {
        var sub: String
        var exp: Int64
        var scope: [String]
    }

    let key = SecureRandom.bytes(32)
    let claims = Claims(sub: "user-17", exp: 2_000_000_000, scope: ["read", "write"])

    func keys(_ kid: String) -> [UInt8]? {
        kid == "k1" ? key : nil
    }

    /// A token built by hand: lets tests put anything in the header and still sign correctly.
    func handMade(header: String, payload: String = #"{"sub":"x"}"#, key: [UInt8]? = nil) -> String {
        let input = Base64URL.encode(bytes(header)) + "." + Base64URL.encode(bytes(payload))
        return input + "." + Base64URL.encode(HMAC.sha256(key: key ?? self.key, message: bytes(input)))
    }

    @Test func roundTrips() throws {
        let token = try JWT.sign(header: ["kid": "k1"], claims: claims, key: key)
        #expect(try JWT.verify(token, keys: keys, as: Claims.self) == claims)
    }

    @Test func headerIsDeterministicAndNamesHS256() throws {
        let token = try JWT.sign(header: ["kid": "k1", "alg": "none"], claims: claims, key: key)
        let header = try #require(token.split(separator: ".").first)
        #expect(
            Base64URL.decode(String(header)).map { String(decoding: $0, as: UTF8.self) }
                == #"{"alg":"HS256","kid":"k1","typ":"JWT"}"#)
        #expect(
            try JWT.sign(header: ["kid": "k1"], claims: claims, key: key)
                == JWT.sign(header: ["kid": "k1"], claims: claims, key: key))
    }

    @Test func signatureIsBase64URLHMACOverHeaderDotPayload() throws {
        let token = try JWT.sign(header: ["kid": "k1"], claims: claims, key: key)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 3)
        let signingInput = parts[0] + "." + parts[1]
        #expect(parts[2] == Base64URL.encode(HMAC.sha256(key: key, message: bytes(signingInput))))
        #expect(!token.contains("="))
    }

    @Test func rfc7515AppendixA1Signature() throws {
        // RFC 7515 appendix A.1: HS256 over the exact header and payload bytes of the example.
        let key = try #require(
            Base64URL.decode(
                "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"))
        let signingInput =
            "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        #expect(
            Base64URL.encode(HMAC.sha256(key: key, message: bytes(signingInput)))
                == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        // The example has no kid, so this verifier refuses it.
        #expect(throws: JWTError.unknownKey) {
            try JWT.verify(
                signingInput + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
                keys: { _ in key }, as: [String: Bool].self)
        }
    }

    @Test func acceptsAHandMadeTokenWithExtraHeaderFields() throws {
        let token = handMade(header: #"{"alg":"HS256","kid":"k1","typ":"JWT","x5u":"ignored"}"#)
        #expect(try JWT.verify(token, keys: keys, as: [String: String].self) == ["sub": "x"])
    }

    @Test(arguments: [
        #"{"alg":"none","kid":"k1"}"#, #"{"alg":"None","kid":"k1"}"#, #"{"alg":"HS512","kid":"k1"}"#,
        #"{"alg":"hs256","kid":"k1"}"#, #"{"alg":"HS256 ","kid":"k1"}"#, #"{"alg":"RS256","kid":"k1"}"#,
        #"{"kid":"k1"}"#, #"{"alg":null,"kid":"k1"}"#,
    ])
    func refusesAnyAlgorithmButHS256(header: String) {
        #expect(throws: JWTError.unsupportedAlgorithm) {
            try JWT.verify(handMade(header: header), keys: keys, as: [String: String].self)
        }
    }

    @Test func refusesUnsignedAlgNoneToken() {
        let unsigned =
            Base64URL.encode(bytes(#"{"alg":"none","kid":"k1"}"#)) + "."
            + Base64URL.encode(bytes(#"{"sub":"admin"}"#)) + "."
        #expect(throws: JWTError.unsupportedAlgorithm) {
            try JWT.verify(unsigned, keys: keys, as: [String: String].self)
        }
    }

    @Test func refusesUnknownOrMissingKid() throws {
        let token = try JWT.sign(header: ["kid": "k2"], claims: claims, key: key)
        #expect(throws: JWTError.unknownKey) { try JWT.verify(token, keys: keys, as: Claims.self) }
        let noKid = try JWT.sign(claims: claims, key: key)
        #expect(throws: JWTError.unknownKey) { try JWT.verify(noKid, keys: keys, as: Claims.self) }
    }

    @Test func refusesFlippedSignatureByte() throws {
        let token = try JWT.sign(header: ["kid": "k1"], claims: claims, key: key)
        var signature = try #require(Base64URL.decode(String(token.split(separator: ".")[2])))
        signature[7] ^= 0x01
        let parts = token.split(separator: ".")
        let tampered = parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)
        #expect(throws: JWTError.badSignature) { try JWT.verify(tampered, keys: keys, as: Claims.self) }
    }

    @Test func refusesChangedPayloadAndWrongKey() throws {
        let token = try JWT.sign(header: ["kid": "k1"], claims: claims, key: key)
        let parts = token.split(separator: ".")
        let otherPayload = Base64URL.encode(bytes(#"{"exp":2000000000,"scope":["admin"],"sub":"user-17"}"#))
        let tampered = parts[0] + "." + otherPayload + "." + parts[2]
        #expect(throws: JWTError.badSignature) { try JWT.verify(tampered, keys: keys, as: Claims.self) }
        #expect(throws: JWTError.badSignature) {
            try JWT.verify(token, keys: { _ in SecureRandom.bytes(32) }, as: Claims.self)
        }
    }

    @Test func refusesWrongNumberOfParts() throws {
        let token = try JWT.sign(header: ["kid": "k1"], claims: claims, key: key)
        let parts = token.split(separator: ".")
        for candidate in [parts[0] + "." + parts[1], token + "." + parts[2], token + ".", "", "..", "...", "a"] {
            #expect(throws: JWTError.malformed) { try JWT.verify(candidate, keys: keys, as: Claims.self) }
        }
    }

    @Test func refusesGarbageBase64() throws {
        let token = try JWT.sign(header: ["kid": "k1"], claims: claims, key: key)
        let parts = token.split(separator: ".").map(String.init)
        for candidate in [
            "!!!." + parts[1] + "." + parts[2], // header
            parts[0] + "." + parts[1] + ".a$b", // signature
            parts[0] + "." + parts[1] + "." + parts[2] + "=", // padding is not allowed in JWS
            parts[0].replacingOccurrences(of: "e", with: "+") + "." + parts[1] + "." + parts[2],
        ] {
            #expect(throws: JWTError.malformed) { try JWT.verify(candidate, keys: keys, as: Claims.self) }
        }
    }

    @Test func refusesHeaderThatIsNotAJSONObject() {
        for header in ["[1,2]", "not json", #""HS256""#, "{"] {
            #expect(throws: JWTError.malformed) {
                try JWT.verify(handMade(header: header), keys: keys, as: [String: String].self)
            }
        }
    }

    @Test func refusesCriticalHeaderExtensions() {
        let token = handMade(header: #"{"alg":"HS256","crit":["exp"],"exp":1,"kid":"k1"}"#)
        #expect(throws: JWTError.malformed) { try JWT.verify(token, keys: keys, as: [String: String].self) }
    }

    @Test func refusesClaimsOfTheWrongShapeAfterCheckingTheSignature() {
        let token = handMade(header: #"{"alg":"HS256","kid":"k1"}"#, payload: #"{"sub":42}"#)
        #expect(throws: JWTError.malformed) { try JWT.verify(token, keys: keys, as: Claims.self) }
        let notJSON = handMade(header: #"{"alg":"HS256","kid":"k1"}"#, payload: "hello")
        #expect(throws: JWTError.malformed) { try JWT.verify(notJSON, keys: keys, as: Claims.self) }
    }

    @Test func refusesShortKeys() {
        #expect(throws: JWTError.invalidKey) {
            try JWT.sign(header: ["kid": "k1"], claims: claims, key: SecureRandom.bytes(31))
        }
        let short = SecureRandom.bytes(16)
        let token = handMade(header: #"{"alg":"HS256","kid":"k1"}"#, key: short)
        #expect(throws: JWTError.invalidKey) { try JWT.verify(token, keys: { _ in short }, as: [String: String].self) }
    }

    @Test func refusesOversizedTokens() {
        let token = handMade(
            header: #"{"alg":"HS256","kid":"k1"}"#,
            payload: #"{"sub":""# + String(repeating: "x", count: 9000) + #""}"#)
        #expect(throws: JWTError.malformed) { try JWT.verify(token, keys: keys, as: [String: String].self) }
    }

    @Test func datesAreNumericDates() throws {
        struct Dated: Codable, Equatable { var exp: Date }
        let value = Dated(exp: Date(timeIntervalSince1970: 1_700_000_000))
        let token = try JWT.sign(header: ["kid": "k1"], claims: value, key: key)
        let payload = try #require(Base64URL.decode(String(token.split(separator: ".")[1])))
        #expect(String(decoding: payload, as: UTF8.self) == #"{"exp":1700000000}"#)
        #expect(try JWT.verify(token, keys: keys, as: Dated.self) == value)
    }
}

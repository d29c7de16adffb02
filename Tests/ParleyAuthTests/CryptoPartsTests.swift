import Foundation
import ParleyCrypto
import Testing

@testable import ParleyAuth

/// The pure parts: key parsing, secret sealing, identifiers.
@Suite("Auth crypto parts")
struct CryptoPartsTests {
    @Test func masterKeyAcceptsHexAndBase64Only() throws {
        let bytes = SecureRandom.bytes(32)
        #expect(try MasterKey(parsing: Hex.encode(bytes)).bytes == bytes)
        #expect(try MasterKey(parsing: Base64.encode(bytes)).bytes == bytes)
        #expect(try MasterKey(parsing: Base64URL.encode(bytes)).bytes == bytes)
        #expect(throws: MasterKey.Invalid.self) { try MasterKey(parsing: Hex.encode(SecureRandom.bytes(16))) }
        do {
            _ = try MasterKey(parsing: "secret-value-that-must-not-be-echoed")
        } catch {
            #expect(!error.description.contains("secret-value"))
        }
    }

    @Test func tokenKeyRingParsing() throws {
        let k1 = SecureRandom.bytes(32), k2 = SecureRandom.bytes(48)
        let ring = try TokenKeyRing(parsing: "k1:\(Base64.encode(k1)), k2:\(Base64URL.encode(k2))")
        #expect(ring.signingKeyID == "k1")
        #expect(ring.key(for: "k2") == k2)
        #expect(throws: TokenKeyRing.Invalid.self) {
            try TokenKeyRing(parsing: "k1:\(Base64.encode(SecureRandom.bytes(16)))")
        }
        #expect(throws: TokenKeyRing.Invalid.self) { try TokenKeyRing(parsing: Base64.encode(k1)) }
        #expect(throws: TokenKeyRing.Invalid.self) {
            try TokenKeyRing(parsing: "a:\(Base64.encode(k1)),a:\(Base64.encode(k1))")
        }
        let derived = TokenKeyRing(derivedFrom: try MasterKey(bytes: k1))
        #expect(derived.signingKeyID == "m1")
        #expect(derived.key(for: "m1") == HMAC.sha256(key: k1, message: Array("parley token key v1".utf8)))
    }

    @Test func appSecretsAreBoundToTheirAppKey() throws {
        let box = AppSecretBox(masterKey: try MasterKey(bytes: SecureRandom.bytes(32)))
        let sealed = try box.seal(secret: "as_example", appKey: "ak_one")
        #expect(box.open(sealed, appKey: "ak_one") == "as_example")
        #expect(box.open(sealed, appKey: "ak_two") == nil) // copied to another app's row: useless
        let otherBox = AppSecretBox(masterKey: try MasterKey(bytes: SecureRandom.bytes(32)))
        #expect(otherBox.open(sealed, appKey: "ak_one") == nil)
    }

    @Test func identifiersHaveTheirShapes() {
        let user = Identifiers.newUserID()
        #expect(user.hasPrefix("u_") && user.count == 22 && Validation.isValidUserID(user))
        #expect(Identifiers.newAppSecret().count == 46)
        #expect(RefreshTokenHash.isWellFormed(Identifiers.newRefreshToken()))
        #expect(Validation.isValidUserID(String(repeating: "a", count: 64)))
        #expect(!Validation.isValidUserID(String(repeating: "a", count: 65)))
        #expect(!Validation.isValidUserID(""))
        #expect(!Validation.isValidUserID("a b"))
        #expect(Validation.normalizedPlatform("iOS") == "ios")
        #expect(Validation.normalizedPlatform("i os") == nil)
    }
}

import ParleyCrypto
import Testing

@Suite struct PasswordHasherTests {
    @Test func scryptMatchesRFC7914Vector() throws {
        // RFC 7914 section 12, second vector.
        let derived = try PasswordHasher.scryptRaw(
            password: bytes("password"), salt: bytes("NaCl"), n: 1024, r: 8, p: 16, length: 64)
        #expect(
            Hex.encode(derived) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
                + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
    }

    @Test func scryptMatchesRFC7914EmptyVector() throws {
        // RFC 7914 section 12, first vector: empty password and salt.
        let derived = try PasswordHasher.scryptRaw(
            password: [UInt8](), salt: [UInt8](), n: 16, r: 1, p: 1, length: 64)
        #expect(
            Hex.encode(derived) == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
                + "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906")
    }

    @Test func hashAndVerifyRoundTrip() throws {
        let encoded = try PasswordHasher.hash(password: "correct horse battery staple", parameters: .testing)
        #expect(encoded.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(PasswordHasher.verify(password: "correct horse battery staple", encoded: encoded))
    }

    @Test func defaultParametersWork() throws {
        // N=2^15, r=8 needs just over OpenSSL's built-in 32 MiB maxmem; this fails if the
        // memory limit passed to EVP_PBE_scrypt is too small.
        let encoded = try PasswordHasher.hash(password: "hunter2")
        #expect(encoded.hasPrefix("$scrypt$ln=15,r=8,p=1$"))
        #expect(PasswordHasher.verify(password: "hunter2", encoded: encoded))
        #expect(!PasswordHasher.needsRehash(encoded: encoded))
    }

    @Test func wrongPasswordIsRefused() throws {
        let encoded = try PasswordHasher.hash(password: "hunter2", parameters: .testing)
        #expect(!PasswordHasher.verify(password: "hunter3", encoded: encoded))
        #expect(!PasswordHasher.verify(password: "", encoded: encoded))
        #expect(!PasswordHasher.verify(password: "hunter2 ", encoded: encoded))
    }

    @Test func saltsAreRandom() throws {
        let first = try PasswordHasher.hash(password: "same", parameters: .testing)
        let second = try PasswordHasher.hash(password: "same", parameters: .testing)
        #expect(first != second)
    }

    @Test func emptyAndUnicodePasswordsWork() throws {
        for password in ["", "pässwörd 🔑", String(repeating: "x", count: 1000)] {
            let encoded = try PasswordHasher.hash(password: password, parameters: .testing)
            #expect(PasswordHasher.verify(password: password, encoded: encoded))
        }
    }

    @Test func verifiesAKnownEncodedString() throws {
        // A hand-assembled string with small stored parameters (ln=4, i.e. N=16, r=1, p=1):
        // verify must honour them rather than the defaults.
        let salt = bytes("saltsaltsaltsalt")
        let derived = try PasswordHasher.scryptRaw(password: bytes("pw"), salt: salt, n: 16, r: 1, p: 1, length: 32)
        let encoded =
            "$scrypt$ln=4,r=1,p=1$\(Base64.encode(salt, padding: false))$\(Base64.encode(derived, padding: false))"
        #expect(PasswordHasher.verify(password: "pw", encoded: encoded))
        #expect(PasswordHasher.needsRehash(encoded: encoded))
    }

    @Test(arguments: [
        "",
        "plaintext",
        "$scrypt$",
        "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA",
        "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$",
        "$argon2id$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$r=8,ln=10,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=+10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=010,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=ten,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=1$c2Fsd!NhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=1$c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", // 4-byte salt
        "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAA", // 3-byte hash
        "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA$extra",
    ])
    func malformedEncodingsAreRefused(encoded: String) {
        #expect(!PasswordHasher.verify(password: "anything", encoded: encoded))
        #expect(PasswordHasher.needsRehash(encoded: encoded))
    }

    @Test(arguments: [
        "ln=0,r=8,p=1", // N=1
        "ln=21,r=8,p=1", // above maxLogN
        "ln=30,r=8,p=1", // 128 GiB
        "ln=9999,r=8,p=1",
        "ln=18,r=8,p=1", // 256 MiB + B: over the memory cap
        "ln=10,r=0,p=1",
        "ln=10,r=33,p=1",
        "ln=10,r=8,p=0",
        "ln=10,r=8,p=17",
        "ln=16,r=8,p=16", // work 2^23 over the limit
        "ln=10,r=9999,p=9999",
    ])
    func absurdStoredParametersAreRefused(parameters: String) {
        let encoded = "$scrypt$\(parameters)$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        #expect(!PasswordHasher.verify(password: "anything", encoded: encoded))
    }

    @Test func parametersInitValidates() throws {
        #expect(try PasswordHasher.Parameters(logN: 15, r: 8, p: 1) == .default)
        #expect(try PasswordHasher.Parameters(logN: 10, r: 8, p: 1) == .testing)
        #expect(PasswordHasher.Parameters.default.memoryByteCount > 32 * 1024 * 1024)
        #expect(throws: CryptoError.self) { try PasswordHasher.Parameters(logN: 25, r: 8, p: 1) }
        #expect(throws: CryptoError.self) { try PasswordHasher.Parameters(logN: 18, r: 8, p: 1) }
    }

    @Test func scryptRawRefusesBadParameters() {
        for (n, r, p, length) in [
            (1000, 8, 1, 32), (0, 8, 1, 32), (1 << 21, 1, 1, 32), (1024, 8, 1, 0),
            (1024, 8, 1, 100_000), (-1024, 8, 1, 32), (1024, -8, 1, 32),
        ] {
            #expect(throws: CryptoError.self) {
                try PasswordHasher.scryptRaw(
                    password: bytes("pw"), salt: bytes("salt"), n: n, r: r, p: p,
                    length: length)
            }
        }
    }
}

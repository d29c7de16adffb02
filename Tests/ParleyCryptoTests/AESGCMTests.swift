import ParleyCrypto
import Testing

@Suite struct AESGCMTests {
    let key = SecureRandom.bytes(32)

    @Test func roundTrips() throws {
        let plaintext = bytes("the app's push certificate password")
        let sealed = try AESGCM.seal(plaintext: plaintext, key: key, associatedData: bytes("app:42"))
        #expect(sealed.count == 12 + plaintext.count + 16)
        #expect(try AESGCM.open(sealed, key: key, associatedData: bytes("app:42")) == plaintext)
    }

    @Test func roundTripsEmptyPlaintextWithoutAssociatedData() throws {
        let sealed = try AESGCM.seal(plaintext: [], key: key)
        #expect(sealed.count == 28)
        #expect(try AESGCM.open(sealed, key: key) == [])
    }

    @Test func usesAFreshNonceEachTime() throws {
        let first = try AESGCM.seal(plaintext: bytes("same"), key: key)
        let second = try AESGCM.seal(plaintext: bytes("same"), key: key)
        #expect(first[..<12] != second[..<12])
        #expect(first != second)
    }

    /// McGrew & Viega, "The Galois/Counter Mode of Operation", test cases 13, 14 and 16
    /// (AES-256, 96-bit IV). `seal` picks its own nonce, so the vectors go through `open`; a
    /// standard `open` accepting `seal`'s output (the round-trip tests) covers the other side.
    @Test(arguments: [
        (
            key: String(repeating: "0", count: 64), nonce: String(repeating: "0", count: 24),
            plaintext: "", ad: "", ciphertext: "", tag: "530f8afbc74536b9a963b4f1c4cb738b"
        ),
        (
            key: String(repeating: "0", count: 64), nonce: String(repeating: "0", count: 24),
            plaintext: String(repeating: "0", count: 32), ad: "",
            ciphertext: "cea7403d4d606b6e074ec5d3baf39d18", tag: "d0d1c8a799996bf0265b98b5d48ab919"
        ),
        (
            key: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
            nonce: "cafebabefacedbaddecaf888",
            plaintext:
                "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
            ad: "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            ciphertext:
                "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
            tag: "76fc6ece0f4e1768cddf8853bb2d551b"
        ),
    ])
    func matchesGCMSpecVectors(
        key: String, nonce: String, plaintext: String, ad: String, ciphertext: String, tag: String
    ) throws {
        let sealed = try hex(nonce + ciphertext + tag)
        #expect(try AESGCM.open(sealed, key: hex(key), associatedData: hex(ad)) == hex(plaintext))
    }

    @Test func refusesAnyFlippedBitInNonceCiphertextOrTag() throws {
        let sealed = try AESGCM.seal(plaintext: bytes("secret value"), key: key, associatedData: bytes("ad"))
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(throws: CryptoError.authenticationFailed) {
                try AESGCM.open(tampered, key: key, associatedData: bytes("ad"))
            }
        }
    }

    @Test func refusesChangedOrMissingAssociatedData() throws {
        let sealed = try AESGCM.seal(plaintext: bytes("secret"), key: key, associatedData: bytes("app:1"))
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, key: key, associatedData: bytes("app:2"))
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, key: key)
        }
    }

    @Test func refusesWrongKey() throws {
        let sealed = try AESGCM.seal(plaintext: bytes("secret"), key: key)
        #expect(throws: CryptoError.authenticationFailed) {
            try AESGCM.open(sealed, key: SecureRandom.bytes(32))
        }
    }

    @Test func refusesTruncatedInput() throws {
        let sealed = try AESGCM.seal(plaintext: bytes("secret"), key: key)
        for length in [0, 1, 12, 27, sealed.count - 1] {
            #expect(throws: CryptoError.authenticationFailed) {
                try AESGCM.open(Array(sealed.prefix(length)), key: key)
            }
        }
    }

    @Test func refusesKeysThatAreNot32Bytes() {
        #expect(throws: CryptoError.invalidKeyLength(expected: 32, actual: 16)) {
            try AESGCM.seal(plaintext: [1], key: SecureRandom.bytes(16))
        }
        #expect(throws: CryptoError.invalidKeyLength(expected: 32, actual: 33)) {
            try AESGCM.open([UInt8](repeating: 0, count: 40), key: SecureRandom.bytes(33))
        }
    }
}

import ParleyCrypto
import Testing

/// HMAC-SHA-256 against RFC 4231 section 4 (test case 5 tests truncation, which this API
/// does not offer).
@Suite struct HMACTests {
    @Test func rfc4231TestCase1() throws {
        let key = [UInt8](repeating: 0x0b, count: 20)
        #expect(
            Hex.encode(HMAC.sha256(key: key, message: bytes("Hi There")))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    @Test func rfc4231TestCase2KeyShorterThanOutput() {
        #expect(
            Hex.encode(HMAC.sha256(key: bytes("Jefe"), message: bytes("what do ya want for nothing?")))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func rfc4231TestCase3() {
        let key = [UInt8](repeating: 0xaa, count: 20)
        let message = [UInt8](repeating: 0xdd, count: 50)
        #expect(
            Hex.encode(HMAC.sha256(key: key, message: message))
                == "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe")
    }

    @Test func rfc4231TestCase4() throws {
        let key = try hex("0102030405060708090a0b0c0d0e0f10111213141516171819")
        let message = [UInt8](repeating: 0xcd, count: 50)
        #expect(
            Hex.encode(HMAC.sha256(key: key, message: message))
                == "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b")
    }

    @Test func rfc4231TestCase6KeyLargerThanBlock() {
        let key = [UInt8](repeating: 0xaa, count: 131)
        let message = bytes("Test Using Larger Than Block-Size Key - Hash Key First")
        #expect(
            Hex.encode(HMAC.sha256(key: key, message: message))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func rfc4231TestCase7KeyAndDataLargerThanBlock() {
        let key = [UInt8](repeating: 0xaa, count: 131)
        let message = bytes(
            "This is a test using a larger than block-size key and a larger than block-size data."
                + " The key needs to be hashed before being used by the HMAC algorithm.")
        #expect(
            Hex.encode(HMAC.sha256(key: key, message: message))
                == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    @Test func emptyKeyAndMessageAreAccepted() {
        // RFC 2104 allows any key length; a NULL/empty buffer must not make OpenSSL fail.
        #expect(
            Hex.encode(HMAC.sha256(key: [UInt8](), message: [UInt8]()))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    /// HMAC-SHA-1 against RFC 2202 section 3 (test cases 1, 2 and 6).
    @Test func rfc2202HMACSHA1() {
        #expect(
            Hex.encode(HMAC.sha1(key: [UInt8](repeating: 0x0b, count: 20), message: bytes("Hi There")))
                == "b617318655057264e28bc0b6fb378c8ef146be00")
        #expect(
            Hex.encode(HMAC.sha1(key: bytes("Jefe"), message: bytes("what do ya want for nothing?")))
                == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(
            Hex.encode(
                HMAC.sha1(
                    key: [UInt8](repeating: 0xaa, count: 80),
                    message: bytes("Test Using Larger Than Block-Size Key - Hash Key First")))
                == "aa4ae5e15272d00e95705637ce8a3b55ed402112")
    }
}

import ParleyCrypto
import Testing

@Suite struct EncodingTests {
    @Test func hexRoundTrips() {
        let all = (0...255).map(UInt8.init)
        #expect(Hex.decode(Hex.encode(all)) == all)
        #expect(Hex.encode([0x00, 0x0f, 0xab, 0xff]) == "000fabff")
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("DEADbeef") == [0xde, 0xad, 0xbe, 0xef])
    }

    @Test(arguments: ["abc", "0g", "zz", " 00", "00 ", "0x00", "é0"])
    func hexRejectsInvalidInput(input: String) {
        #expect(Hex.decode(input) == nil)
    }

    /// RFC 4648 section 10.
    @Test(arguments: [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ])
    func base64MatchesRFC4648Vectors(plain: String, encoded: String) {
        #expect(Base64.encode(bytes(plain)) == encoded)
        #expect(Base64.decode(encoded) == bytes(plain))
        let unpadded = String(encoded.prefix { $0 != "=" })
        #expect(Base64.encode(bytes(plain), padding: false) == unpadded)
        #expect(Base64.decode(unpadded) == bytes(plain))
        #expect(Base64URL.encode(bytes(plain)) == unpadded)
        #expect(Base64URL.decode(unpadded) == bytes(plain))
        #expect(Base64URL.decode(encoded) == bytes(plain))
    }

    @Test func alphabetsDifferInTheLastTwoSymbols() {
        let bytes: [UInt8] = [0xfb, 0xff, 0xbf]
        #expect(Base64.encode(bytes) == "+/+/")
        #expect(Base64URL.encode(bytes) == "-_-_")
        #expect(Base64URL.decode("+/+/") == nil)
        #expect(Base64.decode("-_-_") == nil)
    }

    @Test func base64RoundTripsEveryLength() {
        for length in 0..<70 {
            let data = SecureRandom.bytes(length)
            #expect(Base64.decode(Base64.encode(data)) == data)
            #expect(Base64URL.decode(Base64URL.encode(data)) == data)
        }
    }

    @Test(arguments: [
        "Zm9v!", "Zm 9v", "Zm9v\n", "Z", "Zm9vY", "Zg=", "Zg===", "Z===", "=Zg=", "Zm=9", "Zm8==",
        "Zh==", "Zm9=", // non-zero unused bits: non-canonical
        "Zm9vé",
    ])
    func base64RejectsInvalidInput(input: String) {
        #expect(Base64.decode(input) == nil)
        #expect(Base64URL.decode(input) == nil)
    }

    @Test func tokensAreUnpaddedBase64URL() {
        let token = SecureRandom.token()
        #expect(token.utf8.count == 43)
        #expect(Base64URL.decode(token)?.count == 32)
        #expect(SecureRandom.token(bytes: 16).utf8.count == 22)
        #expect(SecureRandom.token() != SecureRandom.token())
    }

    @Test func randomBytesHaveTheRequestedLength() {
        #expect(SecureRandom.bytes(0) == [])
        #expect(SecureRandom.bytes(1000).count == 1000)
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
    }
}

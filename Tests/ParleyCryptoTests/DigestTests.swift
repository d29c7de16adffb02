import ParleyCrypto
import Testing

/// SHA-256 and SHA-1 against the FIPS 180 examples (NIST CSRC "Example Values").
@Suite struct DigestTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func sha256MatchesNISTVectors(message: String, digest: String) {
        #expect(Hex.encode(SHA256.hash(bytes(message))) == digest)
    }

    @Test func sha256AcceptsAnyByteCollection() {
        let message = bytes("xxabcxx")
        #expect(Hex.encode(SHA256.hash(message[2..<5])) == Hex.encode(SHA256.hash(bytes("abc"))))
        #expect(Hex.encode(SHA256.hash("abc".utf8)) == Hex.encode(SHA256.hash(bytes("abc"))))
        // A non-contiguous collection goes through the copying path.
        #expect(SHA256.hash(bytes("abc").lazy.map { $0 }) == SHA256.hash(bytes("abc")))
    }

    @Test func incrementalSHA256OfOneMillionAsInOddPieces() {
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        var hasher = SHA256.Hasher()
        var offset = 0
        var pieceSize = 1
        while offset < million.count {
            let end = min(offset + pieceSize, million.count)
            if pieceSize % 2 == 0 {
                hasher.update(million[offset..<end])
            } else {
                million[offset..<end].withUnsafeBytes { hasher.update($0) }
            }
            offset = end
            pieceSize = pieceSize * 7 % 4093 + 1 // 1, 8, 57, 400, ... never a round size
        }
        #expect(
            Hex.encode(hasher.finalize())
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func incrementalSHA256WithNoInputOrEmptyPiecesIsTheEmptyDigest() {
        var hasher = SHA256.Hasher()
        hasher.update([UInt8]())
        hasher.update(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(hasher.finalize() == SHA256.hash([UInt8]()))
    }

    @Test func incrementalSHA256MatchesOneShot() {
        let message = SecureRandom.bytes(10_000)
        var hasher = SHA256.Hasher()
        hasher.update(message[..<3333])
        hasher.update(message[3333...])
        #expect(hasher.finalize() == SHA256.hash(message))
    }

    @Test func sha1MatchesNISTVector() {
        #expect(Hex.encode(SHA1.hash(bytes("abc"))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test func sha1GivesTheRFC6455HandshakeExample() throws {
        // RFC 6455 section 1.3: the accept value for "dGhlIHNhbXBsZSBub25jZQ==".
        let key = "dGhlIHNhbXBsZSBub25jZQ==" + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
        #expect(Base64.encode(SHA1.hash(bytes(key))) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }
}

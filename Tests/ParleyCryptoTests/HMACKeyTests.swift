import ParleyCrypto
import Testing

/// The precomputed-key HMAC gives exactly what the one-shot HMAC gives, for every key length class.
struct HMACKeyTests {
    @Test(arguments: [0, 1, 32, 63, 64, 65, 200])
    func matchesOneShotHMAC(keyLength: Int) {
        let key = (0..<keyLength).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let precomputed = HMACKey(key)
        for messageLength in [0, 1, 55, 56, 64, 1000] {
            let message = (0..<messageLength).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            #expect(precomputed.authenticate(message) == HMAC.sha256(key: key, message: message))
        }
    }

    @Test func rfc4231TestCase2() {
        // RFC 4231 §4.3: key "Jefe", data "what do ya want for nothing?".
        let mac = HMACKey(Array("Jefe".utf8)).authenticate(Array("what do ya want for nothing?".utf8))
        #expect(Hex.encode(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }
}

/// The allocation-free forms used per download give what the array forms give.
struct InPlaceCryptoTests {
    @Test func authenticateIntoABufferMatches() {
        let key = HMACKey(Array("server key".utf8))
        for length in [0, 1, 63, 64, 65, 300] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            var digest = [UInt8](repeating: 0, count: 32)
            message.withUnsafeBytes { raw in
                digest.withUnsafeMutableBytes { key.authenticate(raw, into: $0) }
            }
            #expect(digest == key.authenticate(message))
        }
    }

    @Test func decodeIntoABufferMatchesTheArrayDecoder() {
        for length in [0, 1, 2, 3, 31, 32, 33] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            let text = Base64URL.encode(bytes)
            var out = [UInt8](repeating: 0, count: length)
            let ok = Array(text.utf8).withUnsafeBytes { raw in
                out.withUnsafeMutableBytes { Base64URL.decodeUnpadded(raw, into: $0) }
            }
            #expect(ok && out == bytes, "\(length)")
        }
    }

    @Test(arguments: [
        "", // wrong length
        "AAAA", // 3 bytes, not 32
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", // padded
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA+", // `+` is not in the URL alphabet
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB", // non-zero trailing bits (not canonical)
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", // one symbol too many
    ])
    func decodeIntoABufferRefuses(text: String) {
        var out = [UInt8](repeating: 0, count: 32)
        let ok = Array(text.utf8).withUnsafeBytes { raw in
            out.withUnsafeMutableBytes { Base64URL.decodeUnpadded(raw, into: $0) }
        }
        #expect(!ok)
    }

    @Test func decodeIntoABufferAcceptsTheCanonicalForm() {
        var out = [UInt8](repeating: 1, count: 32)
        let ok = Array("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".utf8).withUnsafeBytes { raw in
            out.withUnsafeMutableBytes { Base64URL.decodeUnpadded(raw, into: $0) }
        }
        #expect(ok && out == [UInt8](repeating: 0, count: 32))
    }
}

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

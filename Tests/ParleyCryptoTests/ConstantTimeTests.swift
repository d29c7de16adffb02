import ParleyCrypto
import Testing

@Suite struct ConstantTimeTests {
    @Test func equalBytesCompareEqual() {
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
        #expect(ConstantTime.equals(bytes("token"), bytes("token")))
        #expect(ConstantTime.equals(bytes("xtokenx")[1..<6], bytes("token")))
        #expect(ConstantTime.equals("token".utf8, bytes("token")))
    }

    @Test func differentBytesCompareUnequal() {
        #expect(!ConstantTime.equals(bytes("token"), bytes("tokem")))
        #expect(!ConstantTime.equals(bytes("token"), bytes("Token")))
    }

    @Test func differentLengthsCompareUnequal() {
        #expect(!ConstantTime.equals(bytes("token"), bytes("token2")))
        #expect(!ConstantTime.equals(bytes("token"), [UInt8]()))
        #expect(!ConstantTime.equals([UInt8](), bytes("t")))
    }
}

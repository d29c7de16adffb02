import Testing

@testable import ParleyWebSocket

@Suite struct FrameEncoderTests {
    @Test func encodesTheRFCExamples() {
        // RFC 6455 §5.7.
        #expect(WebSocketFrameEncoder.server.encodeText("Hello") == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(
            TestFrames.client(.text, "Hello") == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        #expect(WebSocketFrameEncoder.server.encodeText("Hel", fin: false) == [0x01, 0x03, 0x48, 0x65, 0x6C])
        #expect(TestFrames.server(.continuation, Array("lo".utf8)) == [0x80, 0x02, 0x6C, 0x6F])
        #expect(TestFrames.server(.ping, Array("Hello".utf8)) == [0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(TestFrames.server(.binary, TestFrames.payload(256)).prefix(4) == [0x82, 0x7E, 0x01, 0x00])
        #expect(
            TestFrames.server(.binary, TestFrames.payload(65536)).prefix(10) == [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0])
    }

    @Test(arguments: [0, 1, 125, 126, 127, 65535, 65536])
    func usesTheMinimalLengthEncoding(length: Int) {
        let frame = TestFrames.server(.binary, TestFrames.payload(length))
        let expectedHeader = length <= 125 ? 2 : (length <= 65535 ? 4 : 10)
        #expect(frame.count == expectedHeader + length)
        #expect(WebSocketFrameEncoder.headerLength(payloadLength: length, masked: false) == expectedHeader)
        #expect(WebSocketFrameEncoder.headerLength(payloadLength: length, masked: true) == expectedHeader + 4)
    }

    @Test(arguments: [0, 1, 3, 4, 5, 8, 9, 125, 126, 65535, 65536, 100_003])
    func roundTripsServerAndClientFrames(length: Int) throws {
        for opcode in [WebSocketOpcode.binary, .text, .continuation] {
            for fin in [true, false] {
                let payload = TestFrames.payload(length, seed: length)
                var serverSide = WebSocketFrameParser(role: .server, maxFramePayloadBytes: 1 << 20)
                serverSide.append(
                    contentsOf: WebSocketFrameEncoder.client.encode(opcode: opcode, payload: payload, fin: fin))
                #expect(try serverSide.next() == WebSocketFrame(fin: fin, opcode: opcode, payload: payload))
                var clientSide = WebSocketFrameParser(role: .client, maxFramePayloadBytes: 1 << 20)
                clientSide.append(
                    contentsOf: WebSocketFrameEncoder.server.encode(opcode: opcode, payload: payload, fin: fin))
                #expect(try clientSide.next() == WebSocketFrame(fin: fin, opcode: opcode, payload: payload))
            }
        }
    }

    @Test func drawsAFreshMaskKeyForEveryClientFrame() {
        let keys = Set((0..<20).map { _ in Array(WebSocketFrameEncoder.client.encodeText("x").dropFirst(2).prefix(4)) })
        #expect(keys.count > 15)
    }

    @Test func closePayloadCarriesCodeAndReason() throws {
        let payload = WebSocketClosePayload.encode(code: .goingAway, reason: "bye")
        #expect(payload == [0x03, 0xE9, 0x62, 0x79, 0x65])
        let decoded = try WebSocketClosePayload.decode(payload)
        #expect(decoded.code == .goingAway)
        #expect(decoded.reason == "bye")
        #expect(WebSocketClosePayload.encode(code: nil, reason: "ignored").isEmpty)
    }

    @Test func closeReasonIsCutToFitAControlFrameAtACharacterBoundary() throws {
        let reason = String(repeating: "é", count: 100) // 200 bytes
        let payload = WebSocketClosePayload.encode(code: .normalClosure, reason: reason)
        #expect(payload.count == 2 + 122) // 61 two-byte characters; a 62nd would pass 123
        #expect(try WebSocketClosePayload.decode(payload).reason == String(repeating: "é", count: 61))
        let frame = WebSocketFrameEncoder.server.encodeClose(
            code: .normalClosure, reason: String(repeating: "a", count: 500))
        #expect(frame.count == 2 + 125)
    }
}

@Suite struct UTF8ValidatorTests {
    @Test func agreesWithTheStandardLibraryOnEveryTwoByteSequence() {
        var mismatches: [[UInt8]] = []
        for a in 0...255 {
            for b in 0...255 {
                let bytes = [UInt8(a), UInt8(b)]
                var validator = UTF8Validator()
                let ours = validator.validate(bytes) && validator.isComplete
                if ours != (String(validating: bytes, as: UTF8.self) != nil) { mismatches.append(bytes) }
            }
        }
        #expect(mismatches.isEmpty)
    }

    @Test func agreesWithTheStandardLibraryOnRandomSequences() {
        var generator = SystemRandomNumberGenerator()
        let interesting: [UInt8] = [
            0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
            0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
        ]
        var mismatches: [[UInt8]] = []
        for _ in 0..<100_000 {
            let count = Int.random(in: 1...6, using: &generator)
            let bytes = (0..<count).map { _ in interesting.randomElement(using: &generator)! }
            var validator = UTF8Validator()
            let ours = validator.validate(bytes) && validator.isComplete
            if ours != (String(validating: bytes, as: UTF8.self) != nil) { mismatches.append(bytes) }
        }
        #expect(mismatches.isEmpty)
    }

    @Test(arguments: [
        [UInt8(0xC0), 0x80], // overlong NUL
        [0xE0, 0x80, 0x80], // overlong 3-byte
        [0xF0, 0x80, 0x80, 0x80], // overlong 4-byte
        [0xED, 0xA0, 0x80], // surrogate U+D800
        [0xF4, 0x90, 0x80, 0x80], // U+110000
        [0xF5, 0x80, 0x80, 0x80],
        [0x80],
        [0xFF],
    ])
    func rejectsInvalidSequences(bytes: [UInt8]) {
        var validator = UTF8Validator()
        let accepted = validator.validate(bytes)
        #expect(!accepted)
        #expect(validator.isRejected)
    }

    @Test func failsOnTheFirstByteThatMakesThePrefixInvalid() {
        // Autobahn 6.4.1: κόσμε then F4 90 80 80: invalid at 0x90, not at the end.
        var validator = UTF8Validator()
        let prefixAccepted = validator.validate(Array("κόσμε".utf8) + [0xF4])
        #expect(prefixAccepted)
        #expect(!validator.isComplete)
        let nextAccepted = validator.validate([0x90])
        #expect(!nextAccepted)
    }

    @Test func acceptsValidTextSplitAtEveryByte() {
        let bytes = Array("a ü € 𝄞 κόσμε ascii-run-longer-than-eight-bytes 👍🏽".utf8)
        for split in 0...bytes.count {
            var validator = UTF8Validator()
            let first = validator.validate(Array(bytes[..<split]))
            let second = validator.validate(Array(bytes[split...]))
            #expect(first && second && validator.isComplete, "split at \(split)")
        }
    }
}

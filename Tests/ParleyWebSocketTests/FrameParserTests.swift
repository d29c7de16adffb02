import Glibc
import ParleyTestSupport
import Testing

@testable import ParleyWebSocket

/// The corpus: every length class boundary (7-bit, 16-bit, 64-bit), every opcode, fragments, control frames.
private let corpus: [WebSocketFrame] = {
    var frames: [WebSocketFrame] = []
    for length in [0, 1, 7, 8, 9, 125, 126, 127, 65535, 65536] {
        frames.append(WebSocketFrame(opcode: .binary, payload: TestFrames.payload(length, seed: length)))
    }
    frames.append(WebSocketFrame(opcode: .text, payload: Array("héllo wörld ✓".utf8)))
    frames.append(WebSocketFrame(fin: false, opcode: .text, payload: Array("frag".utf8)))
    frames.append(WebSocketFrame(fin: false, opcode: .continuation, payload: TestFrames.payload(300)))
    frames.append(WebSocketFrame(opcode: .ping, payload: []))
    frames.append(WebSocketFrame(opcode: .ping, payload: TestFrames.payload(125)))
    frames.append(WebSocketFrame(opcode: .continuation, payload: []))
    frames.append(WebSocketFrame(opcode: .pong, payload: Array("pong".utf8)))
    frames.append(
        WebSocketFrame(opcode: .close, payload: WebSocketClosePayload.encode(code: .goingAway, reason: "bye")))
    return frames
}()

private func encodedMasked(_ frame: WebSocketFrame) -> [UInt8] {
    TestFrames.client(frame.opcode, frame.payload, fin: frame.fin)
}

private func encodedUnmasked(_ frame: WebSocketFrame) -> [UInt8] {
    TestFrames.server(frame.opcode, frame.payload, fin: frame.fin)
}

@Suite struct FrameParserTests {
    @Test func parsesTheWholeCorpusFedAtOnce() throws {
        var parser = WebSocketFrameParser(maxFramePayloadBytes: 1 << 20)
        parser.append(contentsOf: corpus.flatMap(encodedMasked))
        let (frames, error) = parser.drain()
        #expect(error == nil)
        #expect(frames == corpus)
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func parsesTheWholeCorpusFedOneByteAtATime() throws {
        var parser = WebSocketFrameParser(maxFramePayloadBytes: 1 << 20)
        var frames: [WebSocketFrame] = []
        for byte in corpus.flatMap(encodedMasked) {
            parser.append(contentsOf: [byte])
            let (more, error) = parser.drain()
            #expect(error == nil)
            frames += more
        }
        #expect(frames == corpus)
    }

    /// Every split point of every frame, unmasked (client role): the cut lands in each header field, at
    /// the header/payload boundary and everywhere in the payload.
    @Test(arguments: corpus.indices)
    func parsesEachFrameSplitAtEveryPoint(index: Int) throws {
        let frame = corpus[index]
        let bytes = encodedUnmasked(frame)
        for split in 0...bytes.count {
            try checkSplit(frame, bytes, at: split, role: .client, label: "frame \(index)")
        }
    }

    /// Masked frames (server role) cut at every point of the header and the first and last 64 payload
    /// bytes, and at a spread of points in between (the unmasking path is the same there; every point of
    /// a 64 KiB payload would take minutes in a debug build).
    @Test(arguments: corpus.indices)
    func parsesEachMaskedFrameSplitAtEveryHeaderPointAndAcrossThePayload(index: Int) throws {
        let frame = corpus[index]
        let bytes = encodedMasked(frame)
        var splits = Set(0...min(bytes.count, 78))
        splits.formUnion(max(0, bytes.count - 64)...bytes.count)
        splits.formUnion(stride(from: 0, through: bytes.count, by: max(1, bytes.count / 257)))
        for split in splits.sorted() {
            try checkSplit(frame, bytes, at: split, role: .server, label: "masked frame \(index)")
        }
    }

    private func checkSplit(
        _ frame: WebSocketFrame, _ bytes: [UInt8], at split: Int, role: WebSocketFrameParser.Role,
        label: String
    ) throws {
        var parser = WebSocketFrameParser(role: role, maxFramePayloadBytes: 1 << 20)
        parser.append(contentsOf: bytes[..<split])
        let first = try parser.next()
        if first != nil && split < bytes.count {
            Issue.record("\(label): a frame came out of \(split) of \(bytes.count) bytes")
        }
        parser.append(contentsOf: bytes[split...])
        let parsed = try first ?? parser.next()
        // memcmp rather than Array ==: element-wise comparison of 64 KiB, 65,536 times, is slow unoptimized.
        let same =
            parsed.map { p in
                p.fin == frame.fin && p.opcode == frame.opcode && p.reservedBits == frame.reservedBits
                    && p.payload.count == frame.payload.count
                    && p.payload.withUnsafeBytes { a in
                        frame.payload.withUnsafeBytes { b in
                            a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
                        }
                    }
            } ?? false
        if !same || parser.bufferedByteCount != 0 {
            Issue.record(
                "\(label) (\(frame)) split at \(split) of \(bytes.count) parsed as \(String(describing: parsed))")
        }
    }

    private struct StreamOutcome: Equatable {
        var frames: [WebSocketFrame] = []
        var error: WebSocketProtocolError?
    }

    @Test func parsesFramesSplitAcrossEveryBoundaryOfAStream() throws {
        // Small frames back to back, the stream cut every way: frames straddle every cut.
        let small = corpus.filter { $0.payload.count <= 300 }
        let stream = small.flatMap(encodedMasked)
        let whole = DecoderVerifier.verify(stream) { cuts in
            var parser = WebSocketFrameParser()
            var outcome = StreamOutcome()
            for chunk in DecoderVerifier.chunks(of: stream, cuts: cuts) where outcome.error == nil {
                parser.append(contentsOf: chunk)
                let (frames, error) = parser.drain()
                outcome.frames += frames
                outcome.error = error
            }
            return outcome
        }
        #expect(whole == StreamOutcome(frames: small))
    }

    @Test func unmasksWithTheRFCExampleKey() throws {
        // RFC 6455 §5.7: a single-frame masked text message containing "Hello".
        var parser = WebSocketFrameParser()
        parser.append(contentsOf: [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        #expect(try parser.next() == WebSocketFrame(opcode: .text, payload: Array("Hello".utf8)))
    }

    @Test func unmasksEveryPayloadLengthAroundTheWordSize() throws {
        for length in 0...40 {
            let payload = TestFrames.payload(length, seed: 7)
            var parser = WebSocketFrameParser()
            parser.append(contentsOf: TestFrames.raw(first: 0x82, payload: payload))
            #expect(try parser.next()?.payload == payload, "length \(length)")
        }
    }

    @Test func acceptsNonMinimalLengthEncodings() throws {
        // §5.2 asks senders for the minimal encoding; receivers may accept others (the length is still exact).
        for width in [2, 8] {
            var parser = WebSocketFrameParser()
            parser.append(contentsOf: TestFrames.raw(first: 0x82, payload: [1, 2, 3], lengthBytes: width))
            #expect(try parser.next()?.payload == [1, 2, 3])
        }
    }

    @Test func keepsNoBufferOnceDrained() throws {
        var parser = WebSocketFrameParser()
        parser.append(contentsOf: TestFrames.client(.text, "hi") + TestFrames.client(.binary, [1, 2]).prefix(3))
        _ = try parser.next()
        #expect(parser.bufferedByteCount == 3)
        parser.append(contentsOf: TestFrames.client(.binary, [1, 2]).dropFirst(3))
        _ = try parser.next()
        #expect(parser.bufferedByteCount == 0)
    }
}

@Suite struct FrameParserViolationTests {
    private func parseError(
        _ bytes: [UInt8], role: WebSocketFrameParser.Role = .server,
        max: Int = 1 << 20, allowedRSV: UInt8 = 0
    ) -> WebSocketProtocolError? {
        var parser = WebSocketFrameParser(role: role, maxFramePayloadBytes: max, allowedReservedBits: allowedRSV)
        parser.append(contentsOf: bytes)
        return parser.drain().error
    }

    @Test func rejectsUnmaskedClientFrame() {
        let error = parseError(TestFrames.raw(first: 0x81, payload: Array("hi".utf8), masked: false))
        #expect(error?.closeCode == .protocolError)
    }

    @Test func rejectsMaskedServerFrame() {
        let error = parseError(TestFrames.raw(first: 0x81, payload: Array("hi".utf8), masked: true), role: .client)
        #expect(error?.closeCode == .protocolError)
    }

    @Test(arguments: [UInt8(0x40), 0x20, 0x10, 0x70])
    func rejectsReservedBitsWithoutANegotiatedExtension(bits: UInt8) {
        #expect(parseError(TestFrames.raw(first: 0x80 | bits | 0x1, payload: [0x41]))?.closeCode == .protocolError)
    }

    @Test func acceptsReservedBitsAnExtensionNegotiated() throws {
        var parser = WebSocketFrameParser(allowedReservedBits: 0x40)
        parser.append(contentsOf: TestFrames.raw(first: 0xC2, payload: [1]))
        #expect(try parser.next()?.reservedBits == 0x40)
    }

    @Test(arguments: [UInt8(3), 4, 5, 6, 7, 11, 12, 13, 14, 15])
    func rejectsReservedOpcodes(opcode: UInt8) {
        #expect(parseError(TestFrames.raw(first: 0x80 | opcode, payload: []))?.closeCode == .protocolError)
    }

    @Test(arguments: [WebSocketOpcode.ping, .pong, .close])
    func rejectsFragmentedControlFrames(opcode: WebSocketOpcode) {
        #expect(parseError(TestFrames.raw(first: opcode.rawValue, payload: []))?.closeCode == .protocolError)
    }

    @Test(arguments: [WebSocketOpcode.ping, .pong, .close])
    func rejectsControlFramesOver125Bytes(opcode: WebSocketOpcode) {
        let bytes = TestFrames.raw(first: 0x80 | opcode.rawValue, payload: TestFrames.payload(126))
        #expect(parseError(bytes)?.closeCode == .protocolError)
    }

    @Test func acceptsAControlFrameOfExactly125Bytes() throws {
        var parser = WebSocketFrameParser()
        parser.append(contentsOf: TestFrames.raw(first: 0x89, payload: TestFrames.payload(125)))
        #expect(try parser.next()?.payload.count == 125)
    }

    @Test func rejectsA64BitLengthWithTheTopBitSetAndStaysFailed() {
        var parser = WebSocketFrameParser()
        parser.append(contentsOf: [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0])
        #expect(throws: WebSocketProtocolError.self) { try parser.next() }
        parser.append(contentsOf: TestFrames.client(.text, "after"))
        #expect(throws: WebSocketProtocolError.self) { try parser.next() }
    }

    @Test func refusesAnOversizedFrameFromItsHeaderAloneWith1009() {
        var parser = WebSocketFrameParser(maxFramePayloadBytes: 1000)
        // Only the header of a 1 GiB frame: refused before a byte of payload arrives.
        parser.append(contentsOf: [0x82, 0xFF, 0, 0, 0, 0, 0x40, 0, 0, 0, 1, 2, 3, 4])
        #expect(throws: WebSocketProtocolError.tooBig("frame payload of 1073741824 bytes over the limit of 1000")) {
            try parser.next()
        }
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func acceptsAFrameOfExactlyTheLimit() throws {
        var parser = WebSocketFrameParser(maxFramePayloadBytes: 1000)
        parser.append(contentsOf: TestFrames.client(.binary, TestFrames.payload(1000)))
        #expect(try parser.next()?.payload.count == 1000)
        parser.append(contentsOf: TestFrames.client(.binary, TestFrames.payload(1001)))
        #expect(throws: WebSocketProtocolError.self) { try parser.next() }
    }

    @Test func skipsARefusedFrameSoTheNextFrameStillParses() throws {
        // After failing the connection the server keeps reading for the peer's Close (§7.1.7).
        var parser = WebSocketFrameParser(maxFramePayloadBytes: 100)
        let oversized = TestFrames.client(.binary, TestFrames.payload(5000))
        let close = TestFrames.client(.close, WebSocketClosePayload.encode(code: .normalClosure))
        parser.append(contentsOf: oversized.prefix(1000))
        #expect(throws: WebSocketProtocolError.self) { try parser.next() }
        parser.append(contentsOf: oversized.dropFirst(1000) + close)
        #expect(try parser.next()?.opcode == .close)
        #expect(parser.bufferedByteCount == 0)
    }
}

import ParleyBytes
import Testing

@Suite struct ByteBufferTests {
    @Test func appendsEveryKindOfPieceInOrderAcrossGrowth() {
        var buffer = ByteBuffer(capacity: 1)
        var expected: [UInt8] = []
        for round in 0..<200 {
            buffer.append(UInt8(round & 0x7F))
            expected.append(UInt8(round & 0x7F))
            buffer.append("ab" as StaticString)
            expected += Array("ab".utf8)
            buffer.append("é-\(round)")
            expected += Array("é-\(round)".utf8)
            buffer.append([1, 2, 3])
            expected += [1, 2, 3]
        }
        let count = buffer.count
        #expect(count == expected.count)
        #expect(buffer.array == expected)
    }

    @Test(arguments: [0, 7, -7, 10, 99, 100, 1_234_567_890, -1_000, Int.max, Int.min])
    func decimalMatchesStringDescription(_ value: Int) {
        var buffer = ByteBuffer(capacity: 2)
        buffer.append("x=" as StaticString)
        buffer.appendDecimal(value)
        #expect(String(decoding: buffer.array, as: UTF8.self) == "x=\(value)")
    }

    @Test func removeAllEmptiesAndGivesBackLargeCapacity() {
        var buffer = ByteBuffer(capacity: 16)
        buffer.append([UInt8](repeating: 9, count: 10_000))
        buffer.removeAll(keepCapacityUpTo: 64)
        let isEmpty = buffer.isEmpty
        #expect(isEmpty)
        buffer.append("again" as StaticString)
        #expect(buffer.array == Array("again".utf8))
    }

    @Test func appendsAnotherBuffer() {
        var first = ByteBuffer()
        first.append("one," as StaticString)
        var second = ByteBuffer()
        second.append("two" as StaticString)
        first.append(second)
        #expect(String(decoding: first.array, as: UTF8.self) == "one,two")
    }
}

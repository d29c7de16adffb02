/// Width and height of a PNG, GIF or JPEG from its first bytes: image messages must carry them
/// (`ImageContent` in openapi.yaml), and a terminal client has no image library. Other formats answer nil and
/// are sent as file messages.
public enum ImageDimensions {
    public static func of(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        let size: (Int, Int)?
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            size = png(bytes)
        } else if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) {
            size = bytes.count >= 10 ? (Int(bytes[6]) | Int(bytes[7]) << 8, Int(bytes[8]) | Int(bytes[9]) << 8) : nil
        } else if bytes.starts(with: [0xFF, 0xD8]) {
            size = jpeg(bytes)
        } else {
            size = nil
        }
        guard let (width, height) = size, (1...100_000).contains(width), (1...100_000).contains(height) else {
            return nil
        }
        return (width, height)
    }

    /// The IHDR chunk comes first: width and height are big-endian at bytes 16 and 20.
    private static func png(_ bytes: [UInt8]) -> (Int, Int)? {
        guard bytes.count >= 24, bytes[12..<16].elementsEqual("IHDR".utf8) else { return nil }
        return (bigEndian(bytes, 16, 4), bigEndian(bytes, 20, 4))
    }

    /// Walks the segments to the first start-of-frame (SOF0-SOF15 but DHT C4, JPG C8, DAC CC): after its length
    /// and precision come height and width.
    private static func jpeg(_ bytes: [UInt8]) -> (Int, Int)? {
        var index = 2
        while index + 9 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF { index += 1; continue } // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { index += 2; continue }
            let length = bigEndian(bytes, index + 2, 2)
            if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) {
                return (bigEndian(bytes, index + 7, 2), bigEndian(bytes, index + 5, 2))
            }
            guard length >= 2 else { return nil }
            index += 2 + length
        }
        return nil
    }

    private static func bigEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int {
        bytes[offset..<(offset + count)].reduce(0) { $0 << 8 | Int($1) }
    }
}

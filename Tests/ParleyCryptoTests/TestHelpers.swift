import ParleyCrypto
import Testing

/// Decodes a hex test vector, failing the test (not crashing) if the literal is malformed.
func hex(_ string: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    try #require(Hex.decode(string), "bad hex literal in test", sourceLocation: sourceLocation)
}

/// The UTF-8 bytes of `string`.
func bytes(_ string: String) -> [UInt8] {
    Array(string.utf8)
}

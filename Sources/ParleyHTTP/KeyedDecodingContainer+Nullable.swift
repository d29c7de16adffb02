/// PATCH bodies tell "leave it" from "clear it": `nil` when the key is absent, `.some(nil)` for an explicit
/// `null`, `.some(value)` otherwise.
extension KeyedDecodingContainer {
    public func decodeNullable<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T?? {
        guard contains(key) else { return nil }
        return .some(try decodeNil(forKey: key) ? nil : try decode(T.self, forKey: key))
    }
}

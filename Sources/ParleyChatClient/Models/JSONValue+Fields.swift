import ParleyJSON

extension JSONValue {
    /// A string field the API promises; a missing one means the answer is not what openapi.yaml describes.
    func required(_ key: String) throws(ParleyAPIError) -> String {
        guard let value = self[key]?.stringValue else { throw .malformedAnswer("no string \"\(key)\" in \(self)") }
        return value
    }

    func requiredInt(_ key: String) throws(ParleyAPIError) -> Int64 {
        guard let value = self[key]?.int64Value else { throw .malformedAnswer("no integer \"\(key)\" in \(self)") }
        return value
    }
}

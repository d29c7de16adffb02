import ParleyHTTP

/// The parameters every search route of messaging reads the same way (user search, message search).
extension HTTPQuery {
    /// `q`: 1 to `maxCharacters` characters without control characters, not only spaces (openapi.yaml's patterns
    /// say the same); trimmed of spaces.
    func searchText(maxCharacters: Int) throws(APIError) -> String {
        guard let raw = try value(for: "q") else {
            throw APIError.validationFailed.with(message: "missing query parameter `q`")
        }
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, raw.unicodeScalars.count <= maxCharacters,
            !raw.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw APIError.validationFailed.with(
                message: "`q` must be 1-\(maxCharacters) characters without control characters, not only spaces")
        }
        return trimmed
    }

    /// `cursor`, read by `parse`; nil when absent or empty, 1114 when `parse` does not know it.
    func searchCursor<Cursor>(_ parse: (String) -> Cursor?) throws(APIError) -> Cursor? {
        guard let raw = try value(for: "cursor"), !raw.isEmpty else { return nil }
        guard let cursor = parse(String(raw)) else {
            throw APIError.invalidCursor.with(message: "invalid search cursor: search again without one")
        }
        return cursor
    }
}

extension Substring {
    /// This substring without leading and trailing characters that match `predicate`.
    func trimmingCharacters(where predicate: (Character) -> Bool) -> Substring {
        guard let first = firstIndex(where: { !predicate($0) }), let last = lastIndex(where: { !predicate($0) })
        else { return "" }
        return self[first...last]
    }
}

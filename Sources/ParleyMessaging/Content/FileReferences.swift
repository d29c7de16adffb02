import ParleyHTTP
import ParleyJSON

/// The files a custom message's content references, wherever the app put them: the values of members named
/// `objectKey`, `object_key`, `thumbnailObjectKey`, `coverObjectKey` (a string each) and `objectKeys`,
/// `object_keys` (an array of strings), as seed 000 writes `{type: "image", object_key, width, height}`. Such a
/// message is checked and granted like an image message: the sender must be allowed to use every file, members
/// of the conversation may then read them, and the sweeper keeps them. The database finds the same keys in the
/// stored content (`parley_custom_object_keys`, migration 0012), within the same bounds.
enum FileReferences {
    /// Nesting (the content itself is level 1) within which names count; a name deeper than this is refused
    /// rather than ignored, so a file is never sent that its recipients could not open.
    static let maxDepth = 8
    /// References in one content (each array element counts); the scan stops at the first one beyond.
    static let maxCount = 32

    static let singleNames: Set<String> = ["objectKey", "object_key", "thumbnailObjectKey", "coverObjectKey"]
    static let listNames: Set<String> = ["objectKeys", "object_keys"]

    /// The distinct keys in the order first met, or 1002 naming what is wrong: a reference that is not a string
    /// (an array of strings for the list names; null is no reference), a key that is not 1-512 printable ASCII
    /// characters, a reference nested deeper than `maxDepth`, more than `maxCount` references. Linear in the size
    /// of the content; the key checks and the check of the files themselves (`AttachmentAuthorizer`) see at most
    /// `maxCount` keys.
    static func scan(_ content: JSONValue, field: String = "content") throws(APIError) -> [String] {
        var scan = Scan()
        try scan.visit(content, depth: 1, path: field)
        return scan.keys
    }

    /// One walk over a content: what it found so far.
    private struct Scan {
        var keys: [String] = []
        var seen: Set<String> = []
        var count = 0

        mutating func visit(_ value: JSONValue, depth: Int, path: @autoclosure () -> String) throws(APIError) {
            switch value {
            case .object(let object):
                for (name, member) in object {
                    if FileReferences.singleNames.contains(name) {
                        try reference(member, list: false, depth: depth, path: "\(path()).\(name)")
                    } else if FileReferences.listNames.contains(name) {
                        try reference(member, list: true, depth: depth, path: "\(path()).\(name)")
                    } else {
                        try visit(member, depth: depth + 1, path: "\(path()).\(name)")
                    }
                }
            case .array(let items):
                for (index, item) in items.enumerated() {
                    try visit(item, depth: depth + 1, path: "\(path())[\(index)]")
                }
            default:
                return
            }
        }

        mutating func reference(_ value: JSONValue, list: Bool, depth: Int, path: String) throws(APIError) {
            if value.isNull { return }
            guard depth <= FileReferences.maxDepth else {
                throw invalid(path, "is a file reference nested deeper than \(FileReferences.maxDepth) levels")
            }
            guard list else {
                guard case .string(let key) = value else { throw invalid(path, "must be an object key (a string)") }
                return try add(key, path: path)
            }
            guard case .array(let items) = value else {
                throw invalid(path, "must be an array of object keys (strings)")
            }
            for (index, item) in items.enumerated() {
                guard case .string(let key) = item else {
                    throw invalid("\(path)[\(index)]", "must be an object key (a string)")
                }
                try add(key, path: "\(path)[\(index)]")
            }
        }

        mutating func add(_ key: String, path: String) throws(APIError) {
            count += 1
            guard count <= FileReferences.maxCount else {
                throw invalid(path, "is one file reference too many: at most \(FileReferences.maxCount) per content")
            }
            guard MessagingInput.isObjectKey(key) else {
                throw invalid(path, "must be an object key of 1-512 printable ASCII characters")
            }
            if seen.insert(key).inserted { keys.append(key) }
        }

        func invalid(_ field: String, _ problem: String) -> APIError {
            APIError.validationFailed.with(message: "`\(field)` \(problem)")
        }
    }
}

import Synchronization

/// The lines a CLI command (`AppCommand`, `ReleaseCommand`, ...) prints, collected for tests, and its
/// `name   value` fields.
public enum CommandOutput {
    public static func lines(_ run: (@escaping @Sendable (String) -> Void) async throws -> Void) async throws
        -> [String]
    {
        let lines = Mutex<[String]>([])
        try await run { line in lines.withLock { $0.append(line) } }
        return lines.withLock { $0 }
    }

    public static func field(_ name: String, in lines: [String]) -> String? {
        lines.first { $0.hasPrefix(name + " ") }.map { $0.dropFirst(name.count).trimmingCharacters(in: .whitespaces) }
    }
}

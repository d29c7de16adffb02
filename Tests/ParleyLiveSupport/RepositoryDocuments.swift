import Foundation

/// The repository's own documents (openapi.yaml, docs/*.md, README.md), for tests that keep them true.
public enum RepositoryDocuments {
    public static let root = URL(fileURLWithPath: LiveApp.migrationsDirectory).deletingLastPathComponent()

    public static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// path -> lower-case methods, from openapi.yaml's `paths:` section (two-space path keys, four-space methods).
    public static func documentedOperations(_ yaml: String) -> [String: Set<String>] {
        var result: [String: Set<String>] = [:]
        var inPaths = false
        var current: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths && !line.hasPrefix(" ") && !line.isEmpty { inPaths = false }
            guard inPaths else { continue }
            if line.hasPrefix("  /") && line.hasSuffix(":") && !line.hasPrefix("   ") {
                current = String(line.dropFirst(2).dropLast())
            } else if let path = current, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                result[path, default: []].insert(String(line.dropFirst(4).dropLast()))
            }
        }
        return result
    }
}

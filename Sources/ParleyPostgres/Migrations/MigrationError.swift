/// Why migrations cannot be checked or applied.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadableDirectory(path: String, reason: String)
    case unreadableFile(path: String)
    /// A `.sql` file that is not named `NNNN_name.sql`.
    case invalidFileName(String)
    /// Two files share a version number.
    case duplicateVersion(Int, files: [String])
    /// An applied migration's file changed after it was applied.
    case checksumMismatch(name: String, expected: String, actual: String)
    /// `schema_migrations` records a version whose file is gone.
    case missingFile(version: Int, name: String)
    /// The migration's SQL failed; it was rolled back and not recorded.
    case failed(name: String, sqlState: String?, message: String)

    public var description: String {
        switch self {
        case .unreadableDirectory(let path, let reason):
            return "cannot read the migrations directory \(path): \(reason)"
        case .unreadableFile(let path):
            return "cannot read the migration file \(path)"
        case .invalidFileName(let name):
            return "invalid migration file name \"\(name)\": expected NNNN_name.sql (at least four digits, then an "
                + "underscore and a name of letters, digits and underscores)"
        case .duplicateVersion(let version, let files):
            return "migration version \(version) is used by more than one file: \(files.joined(separator: ", "))"
        case .checksumMismatch(let name, let expected, let actual):
            return "migration \(name) was modified after it was applied: its checksum is \(actual) but \(expected) was "
                + "recorded when it ran. Applied migrations are immutable: restore the original file and put the change "
                + "in a new migration."
        case .missingFile(let version, let name):
            return "migration \(name) (version \(version)) is recorded as applied but its file is missing. Applied "
                + "migrations are immutable: restore the file."
        case .failed(let name, let sqlState, let message):
            return "migration \(name) failed and was rolled back: \(message)"
                + (sqlState.map { " (SQLSTATE \($0))" } ?? "")
        }
    }
}

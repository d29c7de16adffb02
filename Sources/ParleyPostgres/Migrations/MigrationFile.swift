import Foundation
import ParleyCrypto

/// One `NNNN_name.sql` file: its version, SQL and SHA-256.
struct MigrationFile: Sendable, Equatable {
    let version: Int
    /// The file name, e.g. `0001_init.sql`; also what `schema_migrations.name` records.
    let name: String
    let sql: String
    /// Lowercase hex SHA-256 of the file's bytes.
    let checksum: String

    /// `NNNN_name.sql`: at least four digits, an underscore, then letters, digits and underscores.
    static func parseVersion(fileName: String) -> Int? {
        guard fileName.hasSuffix(".sql") else { return nil }
        let stem = fileName.utf8.dropLast(4)
        guard let underscore = stem.firstIndex(of: UInt8(ascii: "_")) else { return nil }
        let digits = stem[..<underscore]
        let label = stem[stem.index(after: underscore)...]
        func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
        func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") }
        guard digits.count >= 4, digits.count <= 9, digits.allSatisfy(isDigit),
            !label.isEmpty, label.allSatisfy({ isDigit($0) || isLetter($0) || $0 == UInt8(ascii: "_") })
        else { return nil }
        guard let version = Int(String(decoding: digits, as: UTF8.self)), version > 0 else { return nil }
        return version
    }

    /// Every migration in `directory`, in version order. Other files (README, dotfiles) are ignored;
    /// a `.sql` file with a malformed name or a reused version number is an error.
    static func load(directory: String) throws(MigrationError) -> [MigrationFile] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .unreadableDirectory(path: directory, reason: "\(error.localizedDescription)")
        }
        var files: [MigrationFile] = []
        for name in names.sorted() where !name.hasPrefix(".") && name.hasSuffix(".sql") {
            guard let version = parseVersion(fileName: name) else { throw .invalidFileName(name) }
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            guard let data = FileManager.default.contents(atPath: path) else { throw .unreadableFile(path: path) }
            let bytes = [UInt8](data)
            files.append(
                MigrationFile(
                    version: version, name: name, sql: String(decoding: bytes, as: UTF8.self),
                    checksum: Hex.encode(SHA256.hash(bytes))))
        }
        files.sort { $0.version < $1.version }
        var index = 0
        while index < files.count {
            var end = index + 1
            while end < files.count && files[end].version == files[index].version { end += 1 }
            if end - index > 1 { throw .duplicateVersion(files[index].version, files: files[index..<end].map(\.name)) }
            index = end
        }
        return files
    }
}

import Glibc
import Synchronization

/// Keeps the bytes of tiny blobs (up to 16 KiB: small thumbnails, avatars) in memory, bounded in total size. Blobs
/// are immutable and every storage key is used once, so an entry is never stale; such a file is then answered with
/// one `send`, cheaper than a head plus `sendfile` at this size (larger blobs go out with `sendfile` from
/// descriptors `OpenBlobCache` keeps open). Eviction drops a random half when full (cheap, no
/// bookkeeping per hit, and hot entries come back on their next request).
final class SmallBlobCache: Sendable {
    let maxEntryBytes: Int
    let maxTotalBytes: Int
    private let state = Mutex<(entries: [String: [UInt8]], total: Int)>(([:], 0))

    init(maxEntryBytes: Int = 16 * 1024, maxTotalBytes: Int = 64 << 20) {
        self.maxEntryBytes = maxEntryBytes
        self.maxTotalBytes = maxTotalBytes
    }

    /// The blob's bytes from memory, or read from `path` and kept; nil when the file cannot be read whole.
    func bytes(key: String, path: String, size: Int64) -> [UInt8]? {
        guard size <= Int64(maxEntryBytes) else { return nil }
        if let hit = state.withLock({ $0.entries[key] }) { return hit }
        guard let loaded = Self.read(path: path, size: Int(size)) else { return nil }
        state.withLock { state in
            if state.total + loaded.count > maxTotalBytes {
                for key in state.entries.keys where Bool.random() {
                    state.total -= state.entries.removeValue(forKey: key)?.count ?? 0
                }
            }
            if state.entries.updateValue(loaded, forKey: key) == nil { state.total += loaded.count }
        }
        return loaded
    }

    func remove(key: String) {
        state.withLock { state in state.total -= state.entries.removeValue(forKey: key)?.count ?? 0 }
    }

    private static func read(path: String, size: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while offset < size {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + offset, size - offset, off_t(offset)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            offset += n
        }
        return bytes
    }
}

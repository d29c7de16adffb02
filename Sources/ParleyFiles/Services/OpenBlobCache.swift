import Glibc
import ParleyHTTP
import Synchronization

/// Keeps recently served local blobs open, so a hot file costs one `sendfile` per download instead of open,
/// sendfile and close. Blobs are immutable and every storage key is used once, so an open descriptor is never
/// stale. Responses share the descriptor through `FileDescriptorHandle`: eviction only drops the cache's hold, and
/// the file closes when the last response sending it is done. Bounded in count (descriptors are a process limit).
final class OpenBlobCache: Sendable {
    let maxEntries: Int
    private let entries = Mutex<[String: FileDescriptorHandle]>([:])

    init(maxEntries: Int = 256) {
        self.maxEntries = maxEntries
    }

    /// The blob's open descriptor, opening `path` on a miss; nil when it cannot be opened.
    func handle(key: String, path: String) -> FileDescriptorHandle? {
        if let hit = entries.withLock({ $0[key] }) { return hit }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let opened = FileDescriptorHandle(owning: fd)
        return entries.withLock { entries in
            if let raced = entries[key] { return raced }
            // Full: drop a random half (no bookkeeping per hit; hot entries come back on their next request).
            if entries.count >= maxEntries {
                for key in entries.keys where Bool.random() { entries.removeValue(forKey: key) }
            }
            entries[key] = opened
            return opened
        }
    }

    var count: Int { entries.withLock { $0.count } }

    func remove(key: String) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }
}

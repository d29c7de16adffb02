import ParleyNet
import ParleyObservability
import Synchronization

/// Each app's releases in memory, so that an update check (hit by every app start) costs no query:
///
/// - loaded on an app's first check, by one query however many checks arrive at once (they await the same load);
/// - dropped when a release of the app changes: at once on the instance that made the change, and on every other
///   instance when the NOTIFY arrives (`ReleaseChangeListener`); all of them when the listening connection was lost;
/// - refreshed in the background when older than `ttl`, a backstop for anything missed (the stale list keeps
///   answering meanwhile).
///
/// A load that started before a change does not store its result: each change bumps the app's generation.
public final class ReleaseCache: Sendable {
    public typealias Loader = @Sendable (Int64) async throws -> [Release]

    private struct Entry {
        var releases: AppReleases?
        var loadedAt = Instant(nanoseconds: 0)
        /// Bumped by every invalidation; a load stores its result only if it is unchanged.
        var generation: UInt64 = 0
        var loading: Task<AppReleases, any Error>?
        var loadID: UInt64 = 0
    }

    private enum Lookup {
        case fresh(AppReleases)
        case stale(AppReleases, Task<AppReleases, any Error>?)
        case wait(Task<AppReleases, any Error>)
    }

    let ttl: Duration
    private let load: Loader
    private let logger: Logger
    private let entries = Mutex<[Int64: Entry]>([:])
    private let loadCounter = Atomic<UInt64>(0)

    public init(ttl: Duration = .seconds(30), logger: Logger, load: @escaping Loader) {
        self.ttl = ttl
        self.logger = logger
        self.load = load
    }

    /// The app's releases: from memory, or loaded (once for all concurrent callers).
    public func releases(appId: Int64) async throws -> AppReleases {
        if let fresh = fresh(appId: appId) { return fresh }
        return try await lookUp(appId: appId)
    }

    /// The app's releases when they are in memory and within the TTL: the synchronous common case.
    @inline(__always)
    func fresh(appId: Int64) -> AppReleases? {
        let now = Instant.now()
        return entries.withLock { entries in
            guard let entry = entries[appId], let releases = entry.releases,
                now.since(entry.loadedAt) < ttl
            else { return nil }
            return releases
        }
    }

    private func lookUp(appId: Int64) async throws -> AppReleases {
        let now = Instant.now()
        let lookup = entries.withLock { entries -> Lookup in
            var entry = entries[appId] ?? Entry()
            if let releases = entry.releases {
                if now.since(entry.loadedAt) < ttl || entry.loading != nil { return .fresh(releases) }
                let task = startLoad(appId: appId, entry: &entry)
                entries[appId] = entry
                return .stale(releases, task)
            }
            if let loading = entry.loading { return .wait(loading) }
            let task = startLoad(appId: appId, entry: &entry)
            entries[appId] = entry
            return .wait(task)
        }
        switch lookup {
        case .fresh(let releases), .stale(let releases, _):
            return releases
        case .wait(let task):
            return try await task.value
        }
    }

    /// Forgets the app's releases: the next check loads them again.
    public func invalidate(appId: Int64) {
        entries.withLock { entries in
            guard var entry = entries[appId] else { return }
            entry.generation &+= 1
            entry.releases = nil
            entry.loading = nil // a load in flight may predate the change: later checks start a new one
            entries[appId] = entry
        }
    }

    /// Forgets every app's releases (after notifications may have been missed).
    public func invalidateAll() {
        entries.withLock { entries in
            for appId in Array(entries.keys) {
                entries[appId]?.generation &+= 1
                entries[appId]?.releases = nil
                entries[appId]?.loading = nil
            }
        }
    }

    /// Under the lock: starts the load task and records it in `entry`.
    private func startLoad(appId: Int64, entry: inout Entry) -> Task<AppReleases, any Error> {
        let generation = entry.generation
        let id = loadCounter.wrappingAdd(1, ordering: .relaxed).newValue
        let task = Task { [self] in
            do {
                let releases = AppReleases(appId: appId, releases: try await load(appId))
                finishLoad(appId: appId, id: id, generation: generation, releases: releases)
                return releases
            } catch {
                finishLoad(appId: appId, id: id, generation: generation, releases: nil)
                logger.warning(
                    "loading releases failed",
                    [
                        "app_id": .int(Int(appId)),
                        "error": .string(String(describing: error)),
                    ])
                throw error
            }
        }
        entry.loading = task
        entry.loadID = id
        return task
    }

    private func finishLoad(appId: Int64, id: UInt64, generation: UInt64, releases: AppReleases?) {
        let now = Instant.now()
        entries.withLock { entries in
            guard var entry = entries[appId] else { return }
            if entry.loadID == id { entry.loading = nil }
            if let releases, entry.generation == generation {
                entry.releases = releases
                entry.loadedAt = now
            }
            entries[appId] = entry
        }
    }
}

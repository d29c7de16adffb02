import Synchronization

/// Every app's settings in memory, read on each authenticated request (privacy version, session policy,
/// token lifetimes). Loaded at start and refreshed by `AuthSyncService` (NOTIFY `parley_app_changed` plus a
/// poll), so a change made by `parley app ...` on any machine reaches every instance within a second.
public final class AppDirectory: Sendable {
    private struct State {
        var byID: [Int64: AppSettings] = [:]
        var idByKey: [String: Int64] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func app(id: Int64) -> AppSettings? {
        state.withLock { $0.byID[id] }
    }

    public func app(key: String) -> AppSettings? {
        state.withLock { state in state.idByKey[key].flatMap { state.byID[$0] } }
    }

    /// Inserts or replaces one app (keeps the newer of two versions of the same row).
    public func upsert(_ app: AppSettings) {
        state.withLock { state in
            if let existing = state.byID[app.id], existing.updatedAt > app.updatedAt { return }
            if let existing = state.byID[app.id], existing.appKey != app.appKey { state.idByKey[existing.appKey] = nil }
            state.byID[app.id] = app
            state.idByKey[app.appKey] = app.id
        }
    }

    public func remove(id: Int64) {
        state.withLock { state in
            if let existing = state.byID.removeValue(forKey: id) { state.idByKey[existing.appKey] = nil }
        }
    }

    public var all: [AppSettings] { state.withLock { Array($0.byID.values) } }
}

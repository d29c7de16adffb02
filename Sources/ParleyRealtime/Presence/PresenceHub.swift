import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyNet
import ParleyObservability
import ParleyWebSocket
import Synchronization

/// Presence on this instance: runs `PresenceState` under one lock and carries out its effects after unlocking
/// (publish to the other instances, record the connection's status and last-seen time through `ClusterPresence`,
/// send the coalesced `presence` frames with one hop per event loop).
final class PresenceHub: Sendable {
    typealias User = ConnectionRegistry.UserKey

    private struct Locked {
        var state: PresenceState
        var handles: [UInt64: WebSocketSessionHandle] = [:]
    }

    /// This instance's id in `realtime_instances` (what other instances' descriptors name).
    let instanceId: String
    /// Users one `presence_subscribe` may list.
    static let maxUsersPerFrame = 1000
    private let locked: Mutex<Locked>
    private let repository: PresenceRepository?
    private let cluster: ClusterPresence?
    private let publish: @Sendable ([UInt8]) -> Void
    private let logger: Logger
    private let events: Counter

    init(
        instanceId: String, window: Duration, maxSubscriptionsPerUser: Int, repository: PresenceRepository?,
        cluster: ClusterPresence?, logger: Logger, metrics: MetricsRegistry,
        publish: @escaping @Sendable ([UInt8]) -> Void
    ) {
        self.instanceId = instanceId
        locked = Mutex(Locked(state: PresenceState(window: window, maxSubscriptionsPerUser: maxSubscriptionsPerUser)))
        self.repository = repository
        self.cluster = cluster
        self.publish = publish
        self.logger = logger
        events = metrics.counter(
            "parley_realtime_presence_frames_total", help: "Coalesced presence frames sent to subscribers."
        ).labels()
    }

    // MARK: Connections

    func opened(_ entry: GatewayEntry) {
        let effects = locked.withLock { locked in
            locked.handles[entry.id] = entry.handle
            return locked.state.connectionOpened(
                entry.id, user: User(appId: entry.appId, userId: entry.userId), now: .now, date: Date())
        }
        carryOut(effects)
    }

    func closed(_ entry: GatewayEntry) {
        let effects = locked.withLock { locked in
            locked.handles[entry.id] = nil
            return locked.state.connectionClosed(entry.id, now: .now, date: Date())
        }
        carryOut(effects)
    }

    // MARK: Frames

    /// The ack data of a `presence_*` frame from connection `entry`.
    func answer(_ frame: ClientFrame, connection entry: GatewayEntry) async throws -> [UInt8] {
        switch frame.type {
        case "presence_set":
            let status: PresenceStatus
            switch try frame.string("status") {
            case "online": status = .online
            case "away": status = .away
            default: throw APIError.invalidPresenceStatus
            }
            let effects = locked.withLock {
                $0.state.statusSet(entry.id, to: status, now: .now, date: Date())
            }
            cluster?.statusChanged(connectionId: entry.id, away: status == .away)
            carryOut(effects)
            return Array(#"{"status":"#.utf8) + JSONValue.string(status.rawValue).serialized() + [UInt8(ascii: "}")]
        case "presence_subscribe":
            let users = try Self.userIDs(frame.data["userIds"], max: Self.maxUsersPerFrame, field: "data.userIds")
                .map { User(appId: entry.appId, userId: $0) }
            let asked = try locked.withLock { locked throws(APIError) in
                try locked.state.subscribing(entry.id, to: users)
            }
            var seeds: [User: PresenceState.Seed] = [:]
            if !asked.isEmpty {
                do {
                    seeds = try await lookUp(appId: entry.appId, viewer: entry.userId, asked)
                } catch {
                    locked.withLock { $0.state.subscribeFailed(entry.id, to: asked) }
                    throw error
                }
            }
            let entries = locked.withLock { locked in
                _ = locked.state.subscribed(entry.id, to: asked, seeds: seeds)
                return locked.state.currentEntries(ofConnection: entry.id, users)
            }
            return Self.usersJSON(entries.map { Self.encode($0) })
        case "presence_unsubscribe":
            let users = try Self.userIDs(frame.data["userIds"], max: Self.maxUsersPerFrame, field: "data.userIds")
                .map { User(appId: entry.appId, userId: $0) }
            locked.withLock { $0.state.unsubscribed(entry.id, from: users) }
            return Array("{}".utf8)
        default:
            throw APIError.unknownFrameType.with(message: "unknown frame type `\(frame.type)`")
        }
    }

    private func lookUp(appId: Int64, viewer: String, _ users: [User]) async throws -> [User: PresenceState.Seed] {
        guard let repository else {
            // A bare gateway (tests without a database) sees everyone, as offline elsewhere.
            return Dictionary(uniqueKeysWithValues: users.map { ($0, PresenceState.Seed()) })
        }
        let seeds = try await repository.seeds(
            appId: appId, viewer: viewer, userIds: users.map(\.userId), excludingInstance: instanceId)
        return Dictionary(
            uniqueKeysWithValues: seeds.map { (User(appId: appId, userId: $0.key), $0.value) })
    }

    /// 1 to `max` user ids, each once, in the order given.
    static func userIDs(_ value: JSONValue?, max: Int, field: String) throws(APIError) -> [String] {
        guard case .array(let values)? = value, (1...max).contains(values.count) else {
            throw APIError.validationFailed.with(message: "`\(field)` must list 1 to \(max) user ids")
        }
        var seen = Set<String>()
        var ids: [String] = []
        for value in values {
            guard case .string(let id) = value, Validation.isValidUserID(id) else {
                throw APIError.validationFailed.with(message: "`\(field)` must hold user ids (1-64 of [A-Za-z0-9_.@-])")
            }
            if seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }

    // MARK: Other instances

    /// A descriptor another instance published.
    func received(_ descriptor: PresenceDescriptor) {
        guard descriptor.instanceId != instanceId else { return }
        let effects = locked.withLock {
            $0.state.remoteStatusReceived(
                User(appId: descriptor.appId, userId: descriptor.userId), instance: descriptor.instanceId,
                status: descriptor.status, now: .now, date: Date())
        }
        carryOut(effects)
    }

    /// Forgets what instances whose heartbeat went stale said (a crashed instance's users go offline here).
    func checkInstances() async {
        guard let repository, locked.withLock({ $0.state.watchesOtherInstances }) else { return }
        do {
            let live = try await repository.liveInstances()
            carryOut(locked.withLock { $0.state.liveInstancesRead(live, now: .now, date: Date()) })
        } catch {
            logger.warning("could not read live instances", ["error": .string(String(describing: error))])
        }
    }

    /// The user changed whether others see their last-seen time.
    func lastSeenVisibilityChanged(appId: Int64, userId: String, hidden: Bool) {
        locked.withLock {
            $0.state.lastSeenVisibilityChanged(User(appId: appId, userId: userId), hidden: hidden)
        }
    }

    // MARK: Effects

    private func carryOut(_ effects: PresenceState.Effects) {
        for (user, status) in effects.publish {
            publish(
                PresenceDescriptor(appId: user.appId, instanceId: instanceId, userId: user.userId, status: status)
                    .serialized())
        }
        for user in effects.wentOfflineHere { cluster?.wentOffline(appId: user.appId, userId: user.userId) }
        if let at = effects.flushAt {
            Task {
                try? await Task.sleep(until: at, clock: .continuous)
                self.flush()
            }
        }
    }

    /// Sends each subscriber connection one frame with every change since the last flush, one hop per loop.
    func flush() {
        let (flush, handles) = locked.withLock { locked -> (PresenceState.Flush, [UInt64: WebSocketSessionHandle]) in
            let flush = locked.state.flushed(now: .now)
            var handles: [UInt64: WebSocketSessionHandle] = [:]
            for id in flush.recipients.keys { handles[id] = locked.handles[id] }
            return (flush, handles)
        }
        guard !flush.recipients.isEmpty else { return }
        let encoded = flush.entries.map(Self.encode)
        var frames: [(handle: WebSocketSessionHandle, frame: [UInt8])] = []
        frames.reserveCapacity(flush.recipients.count)
        for (id, positions) in flush.recipients {
            guard let handle = handles[id] else { continue }
            frames.append((handle, Self.frame(positions.map { encoded[$0] })))
        }
        events.increment(by: flush.recipients.count)
        WebSocketSessionHandle.send(frames)
    }

    // MARK: JSON

    /// `{"userId": ..., "status": ..., "lastSeen"?: ...}`
    static func encode(_ entry: PresenceState.Entry) -> [UInt8] {
        var out = Array(#"{"userId":"#.utf8)
        JSONString.append(entry.user.userId, to: &out)
        out.append(contentsOf: #","status":""#.utf8)
        out.append(contentsOf: entry.status.rawValue.utf8)
        out.append(UInt8(ascii: "\""))
        if let lastSeen = entry.lastSeen {
            out.append(contentsOf: #","lastSeen":"#.utf8)
            JSONString.append(ISO8601.format(lastSeen), to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The `presence` event frame of `entries`, written in one buffer (one per subscriber and flush).
    static func frame(_ entries: [[UInt8]]) -> [UInt8] {
        let prefix = #"{"type":"presence","data":{"users":["#.utf8
        var payload: [UInt8] = []
        payload.reserveCapacity(prefix.count + 3 + entries.reduce(0) { $0 + $1.count + 1 })
        payload.append(contentsOf: prefix)
        for (index, entry) in entries.enumerated() {
            if index > 0 { payload.append(UInt8(ascii: ",")) }
            payload.append(contentsOf: entry)
        }
        payload.append(contentsOf: "]}}".utf8)
        return WebSocketFrameEncoder.server.encode(opcode: .text, payload: payload)
    }

    /// `{"users": [entry, ...]}`
    static func usersJSON(_ entries: [[UInt8]]) -> [UInt8] {
        var out = Array(#"{"users":["#.utf8)
        for (index, entry) in entries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: entry)
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }
}

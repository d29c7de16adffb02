import Foundation
import Synchronization

/// An OAuth 2.0 access token as a token endpoint returns it.
struct OAuthAccessToken: Sendable, Equatable {
    var value: String
    /// `expires_in`: seconds from when it was issued.
    var expiresIn: Int
}

/// The access tokens of FCM and HMS, one per app and credential, reused until shortly before they expire. Pushes
/// that find no token at once share one request for it (a worker sends a job's pushes concurrently): the vendors
/// throttle token requests, and one per push would double every push's cost.
final class OAuthAccessTokens: Sendable {
    /// Which app's credential: a changed credential (`parley app push` again) gets a token of its own.
    struct Key: Hashable, Sendable {
        var vendor: PushVendor
        var appId: Int64
        var client: String
    }

    private enum Entry {
        case ready(token: String, renewAt: Int)
        /// `id` tells this request from a later one for the same key.
        case pending(id: Int, task: Task<OAuthAccessToken, any Error>)
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var nextId = 0
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Int

    init(now: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }) {
        self.now = now
    }

    /// How long before its expiry a token is replaced: five minutes, or half its life when that is shorter, so a
    /// push never leaves with a token that expires on the way.
    static func renewalMargin(expiresIn: Int) -> Int { min(300, max(0, expiresIn) / 2) }

    /// The cached token for `key`, or the one `fetch` gets (shared with every concurrent caller for `key`).
    func token(for key: Key, fetch: @escaping @Sendable () async throws -> OAuthAccessToken) async throws -> String {
        let time = now()
        let step: Step = state.withLock { state in
            switch state.entries[key] {
            case .ready(let token, let renewAt) where time < renewAt:
                return .cached(token)
            case .pending(_, let task):
                return .join(task)
            default:
                state.nextId += 1
                let task = Task { try await fetch() }
                state.entries[key] = .pending(id: state.nextId, task: task)
                return .fetch(id: state.nextId, task)
            }
        }
        switch step {
        case .cached(let token):
            return token
        case .join(let task):
            return try await task.value.value
        case .fetch(let id, let task):
            do {
                let token = try await task.value
                let renewAt = now() + token.expiresIn - Self.renewalMargin(expiresIn: token.expiresIn)
                state.withLock { state in
                    guard case .pending(id, _)? = state.entries[key] else { return } // invalidated meanwhile
                    state.entries[key] = .ready(token: token.value, renewAt: renewAt)
                }
                return token.value
            } catch {
                state.withLock { state in
                    if case .pending(id, _)? = state.entries[key] { state.entries[key] = nil }
                }
                throw error
            }
        }
    }

    private enum Step {
        case cached(String)
        case join(Task<OAuthAccessToken, any Error>)
        case fetch(id: Int, Task<OAuthAccessToken, any Error>)
    }

    /// Forgets `token` (the vendor refused it: revoked or expired early); a token already renewed is kept.
    func invalidate(_ key: Key, token: String) {
        state.withLock { state in
            if case .ready(token, _)? = state.entries[key] { state.entries[key] = nil }
        }
    }
}

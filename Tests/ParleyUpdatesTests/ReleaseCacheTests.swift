import Foundation
import ParleyObservability
@testable import ParleyUpdates
import Synchronization
import Testing

/// `ReleaseCache` without a database: one load for many concurrent checks, invalidation, the TTL backstop.
@Suite("Release cache")
struct ReleaseCacheTests {
    final class CountingLoader: Sendable {
        let loads = Atomic<Int>(0)
        let versions = Mutex<[Int64]>([100])
        let delay: Duration

        init(delay: Duration = .milliseconds(50)) { self.delay = delay }

        func load(_ appId: Int64) async throws -> [Release] {
            loads.add(1, ordering: .relaxed)
            let versions = versions.withLock { $0 }
            try await Task.sleep(for: delay)
            return versions.enumerated().map { UpdateDecisionTests.release(Int64($0.offset + 1), $0.element) }
        }

        var count: Int { loads.load(ordering: .relaxed) }
    }

    static let logger = Logger(sink: LogSink(capturingAt: .error))

    static func newest(_ cache: ReleaseCache) async throws -> Int64? {
        try await cache.releases(appId: 7).track(platform: "ios", channel: "")?.candidates.first?.versionCode
    }

    @Test func concurrentChecksShareOneLoadAndLaterOnesNone() async throws {
        let loader = CountingLoader()
        let cache = ReleaseCache(ttl: .seconds(60), logger: Self.logger) { try await loader.load($0) }
        try await withThrowingTaskGroup(of: Int64?.self) { group in
            for _ in 0..<50 { group.addTask { try await Self.newest(cache) } }
            for try await newest in group { #expect(newest == 100) }
        }
        #expect(loader.count == 1)
        for _ in 0..<100 { _ = try await Self.newest(cache) }
        #expect(loader.count == 1)
    }

    @Test func invalidationLoadsAgainAndALoadStartedBeforeItIsNotKept() async throws {
        let loader = CountingLoader(delay: .milliseconds(200))
        let cache = ReleaseCache(ttl: .seconds(60), logger: Self.logger) { try await loader.load($0) }
        #expect(try await Self.newest(cache) == 100)
        cache.invalidate(appId: 7)
        // A load in flight (it read [100]) when the release list changes and is invalidated again.
        let early = Task { try await Self.newest(cache) }
        try await Task.sleep(for: .milliseconds(50))
        loader.versions.withLock { $0 = [100, 110] }
        cache.invalidate(appId: 7)
        #expect(try await Self.newest(cache) == 110)
        #expect(try await early.value == 100) // its caller started before the change
        try await Task.sleep(for: .milliseconds(250)) // the early load has finished: it must not have replaced 110
        #expect(try await Self.newest(cache) == 110)
        #expect(loader.count == 3)
        cache.invalidateAll()
        #expect(try await Self.newest(cache) == 110)
        #expect(loader.count == 4)
    }

    @Test func pastTheTTLTheStaleListAnswersWhileItReloads() async throws {
        let loader = CountingLoader(delay: .milliseconds(100))
        let cache = ReleaseCache(ttl: .milliseconds(100), logger: Self.logger) { try await loader.load($0) }
        #expect(try await Self.newest(cache) == 100)
        loader.versions.withLock { $0 = [100, 120] }
        try await Task.sleep(for: .milliseconds(150))
        let clock = ContinuousClock()
        let started = clock.now
        #expect(try await Self.newest(cache) == 100) // stale, at once
        #expect(clock.now - started < .milliseconds(50))
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await Self.newest(cache) == 120)
        #expect(loader.count == 2)
    }

    @Test func aFailedLoadIsRetriedByTheNextCheck() async throws {
        let failures = Atomic<Int>(1)
        let cache = ReleaseCache(ttl: .seconds(60), logger: Self.logger) { _ in
            if failures.subtract(1, ordering: .relaxed).oldValue > 0 { throw CancellationError() }
            return [UpdateDecisionTests.release(1, 100)]
        }
        await #expect(throws: CancellationError.self) { try await Self.newest(cache) }
        #expect(try await Self.newest(cache) == 100)
    }
}

import Foundation
import ParleyNet
import ParleyObservability
import Testing

@testable import ParleyApp

/// The order `parley serve` starts its services in (and stops them in reverse).
@Suite struct ApplicationServicesTests {
    @Test func startsWithTheDatabaseBeforeTheFeaturesAndListensLast() throws {
        let configuration = try Configuration(environment: [
            "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none", // never connected to: nothing runs
            "PARLEY_MASTER_KEY": String(repeating: "ab", count: 32),
            "PARLEY_EVENT_LOOPS": "1",
            "PARLEY_FILES_DIR": NSTemporaryDirectory() + "parley-files-" + UUID().uuidString,
        ])
        let app = try Application(configuration: configuration, logSink: LogSink(capturingAt: .error))
        defer {
            app.pushClient.shutdown()
            app.group.shutdown()
        }
        let names = app.services(applyMigrations: false).map(\.name)
        #expect(Set(names).count == names.count, "\(names)")
        // The log flusher stops last, so the whole shutdown reaches the log; the HTTP server stops first, so
        // in-flight requests finish while everything they use still runs.
        #expect(names.first == "log flusher")
        #expect(names.last == "http server")
        let expectedOrder = [
            "event loops", "database", "deployment coordinator", "session events", "password hashing", "auth sync",
            "auth poll", "sync change log", "realtime presence", "realtime delivery", "file storage",
            "release change listener", "push client", "push worker", "push token unbinder",
        ]
        let positions = try expectedOrder.map { name in
            try #require(names.firstIndex(of: name), "no \(name) in \(names)")
        }
        #expect(positions == positions.sorted(), "\(names)")
    }

    /// Behind a proxy that may terminate TLS, signed URLs built from the Host header would be `http://`: serving
    /// there needs PARLEY_PUBLIC_URL (issue 18, item 10).
    @Test func behindProxiesThePublicURLIsRequired() throws {
        let base = [
            "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none",
            "PARLEY_MASTER_KEY": String(repeating: "ab", count: 32),
            "PARLEY_TRUSTED_PROXIES": "10.0.0.0/8",
        ]
        let proxied = try Configuration(environment: base)
        #expect(throws: Configuration.Invalid.self) { try proxied.requirePublicURLBehindProxies() }
        #expect(throws: Configuration.Invalid.self) {
            _ = try Application(configuration: proxied, logSink: LogSink(capturingAt: .error))
        }
        var named = base
        named["PARLEY_PUBLIC_URL"] = "https://im.example.com"
        try Configuration(environment: named).requirePublicURLBehindProxies()
        var direct = base
        direct["PARLEY_TRUSTED_PROXIES"] = nil
        try Configuration(environment: direct).requirePublicURLBehindProxies()
    }
}

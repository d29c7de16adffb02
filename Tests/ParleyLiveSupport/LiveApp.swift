import Foundation
import ParleyApp
import ParleyAuth
import ParleyCrypto
import ParleyFiles
import ParleyObservability
import ParleyPostgres
import ParleyTestSupport
import Synchronization

/// A real Parley server (ParleyApp's `Application`, migrations applied, auth started) on 127.0.0.1:<free port>,
/// against a database of the test cluster.
public final class LiveApp: Sendable {
    public let app: Application
    public let port: UInt16
    public let sink: LogSink
    public let masterKeyHex: String
    private let stopSignal: AsyncStream<Void>.Continuation
    private let runTask: Task<Void, any Error>

    public static let migrationsDirectory: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("migrations").path
    }()

    /// Settings of every test server: few threads, cheap password hashing, generous rate limits.
    public static func configuration(databaseURL: String, masterKeyHex: String, environment: [String: String] = [:])
        throws -> Configuration
    {
        var env = [
            "DATABASE_URL": databaseURL,
            "PARLEY_HTTP_HOST": "127.0.0.1",
            "PARLEY_HTTP_PORT": "0",
            "PARLEY_EVENT_LOOPS": "2",
            "PARLEY_DB_POOL_SIZE": "4",
            "PARLEY_MIGRATIONS_DIR": migrationsDirectory,
            "PARLEY_MASTER_KEY": masterKeyHex,
            "PARLEY_AUTH_RATE_PER_MINUTE": "10000",
            "PARLEY_AUTH_ACCOUNT_RATE_PER_MINUTE": "10000",
            "PARLEY_AUTH_REGISTRATIONS_PER_HOUR": "100000",
            "PARLEY_IM_SEND_RATE_PER_SECOND": "100000",
            "PARLEY_IM_SEND_BURST": "100000",
            "PARLEY_FILES_UPLOADS_PER_MINUTE": "100000",
            "PARLEY_PASSWORD_HASH_THREADS": "2",
            "PARLEY_DEV_ROUTES": "1",
            "PARLEY_SHUTDOWN_GRACE_SECONDS": "1",
            // Each server its own file storage, so tests never see each other's blobs.
            "PARLEY_FILES_DIR": NSTemporaryDirectory() + "parley-files-" + UUID().uuidString,
            "PARLEY_FILES_SWEEP_INTERVAL_SECONDS": "0",
        ]
        env.merge(environment) { _, new in new }
        var configuration = try Configuration(environment: env)
        configuration.passwordParameters = .testing
        return configuration
    }

    /// `configure` adjusts what no setting reaches (a relay's timeouts).
    public init(
        databaseURL: String, masterKeyHex: String = MasterKey.generateHex(), environment: [String: String] = [:],
        logLevel: LogLevel = .info, configure: (inout Configuration) -> Void = { _ in }
    ) async throws {
        self.masterKeyHex = masterKeyHex
        var configuration = try Self.configuration(
            databaseURL: databaseURL, masterKeyHex: masterKeyHex,
            environment: environment)
        configure(&configuration)
        sink = LogSink(capturingAt: logLevel)
        let app = try Application(configuration: configuration, logSink: sink)
        self.app = app
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        stopSignal = continuation
        let ended = Atomic<Bool>(false)
        runTask = Task {
            defer { ended.store(true, ordering: .releasing) }
            try await app.run(applyMigrations: true) {
                for await _ in stream {}
            }
        }
        // Wait for the server to listen, or for `run` to end (it failed). Not a timing claim: on a loaded machine
        // the eleven migrations of a fresh database alone can take tens of seconds; the bound only stops a hang.
        let started = try await eventually(timeout: .seconds(300)) {
            app.server.port != 0 || ended.load(ordering: .acquiring)
        }
        guard started != nil, app.server.port != 0 else {
            throw TestFailure("server did not start; log:\n\(sink.capturedText)")
        }
        port = app.server.port
    }

    public var auth: AuthModule { app.auth }

    /// The local file storage directory of this server.
    public var filesDirectory: String {
        if case .local(let directory) = app.configuration.files.backend { return directory }
        return ""
    }

    public func stop() async {
        stopSignal.finish()
        _ = try? await runTask.value
        if !filesDirectory.isEmpty { try? FileManager.default.removeItem(atPath: filesDirectory) }
    }

    // MARK: Helpers

    /// Creates an app directly through the repository (as `parley app create` does).
    public func createApp(name: String = "Test", privacyVersion: Int = 0, policy: SessionPolicy = .onePerPlatform)
        async throws
        -> (app: AppSettings, secret: String)
    {
        let created = try await auth.appRepository.create(
            name: name, privacyVersion: privacyVersion,
            sessionPolicy: policy, secrets: auth.secrets)
        auth.directory.upsert(created.app)
        return created
    }

    public func client() -> TestClient { TestClient(port: port) }

    /// A signed login (`POST /api/im/auth/login`) as the app's backend sends it; `headers` add to the signed ones.
    public func signedLogin(
        appKey: String, secret: String, _ json: [String: Any], headers: [String: String] = [:]
    ) async throws -> TestResponse {
        try await adminCall(
            "POST", "/api/im/auth/login", appKey: appKey, secret: secret, json: json, headers: headers)
    }

    /// The keys this server signs with (derived from the master key).
    public var tokenKeys: TokenKeyRing { TokenKeyRing(derivedFrom: try! MasterKey(parsing: masterKeyHex)) }
}

/// A fresh database for one test, dropped afterwards.
public func withDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
    let (url, drop) = try await TestDatabase.create()
    do {
        let result = try await body(url)
        await drop()
        return result
    } catch {
        await drop()
        throw error
    }
}

/// A fresh database with every migration applied and a client on it (of one connection unless `poolSize` says more),
/// both gone afterwards: for tests of a repository's SQL without a server.
public func withMigratedClient<T>(poolSize: Int = 1, _ body: (PostgresClient) async throws -> T) async throws -> T {
    try await withDatabase { url in
        let logger = TestEnvironment.capturingLogger().logger
        return try await withPostgresClient(PostgresConfiguration(conninfo: url, poolSize: poolSize), logger: logger) {
            client in
            _ = try await Migrator(client: client, directory: LiveApp.migrationsDirectory, logger: logger).migrate()
            return try await body(client)
        }
    }
}

/// A fresh database and a server on it, both gone afterwards.
public func withLiveApp<T>(
    environment: [String: String] = [:], logLevel: LogLevel = .info,
    configure: (inout Configuration) -> Void = { _ in }, _ body: (LiveApp) async throws -> T
) async throws -> T {
    try await withDatabase { url in
        let live = try await LiveApp(
            databaseURL: url, environment: environment, logLevel: logLevel, configure: configure)
        do {
            let result = try await body(live)
            await live.stop()
            return result
        } catch {
            await live.stop()
            throw error
        }
    }
}

public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

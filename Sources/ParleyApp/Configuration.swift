import Foundation
import ParleyAuth
import ParleyCalls
import ParleyCrypto
import ParleyFiles
import ParleyHTTP
import ParleyMessaging
import ParleyNATS
import ParleyObservability
import ParleyPostgres
import ParleyPush
import ParleyRealtime
import ParleyWebhooks

/// Every setting Parley reads, from the environment. `Setting.all` is the single list that
/// `parley --help` prints and the README's settings table mirrors.
public struct Configuration: Sendable {
    public var databaseURL: String
    /// PARLEY_DATABASE_READ_URL: streaming replicas for lag-tolerant reads (empty: every read on the primary).
    public var databaseReadURLs: [String]
    /// PARLEY_DATABASE_READ_MAX_WAIT_MS: how long such a read waits for a replica to catch up.
    public var databaseReadMaxWait: Duration
    public var httpHost: String
    public var httpPort: UInt16
    public var eventLoops: Int
    public var databasePoolSize: Int
    public var databaseAcquireTimeout: Duration
    public var headerTimeout: Duration
    public var idleTimeout: Duration
    public var shutdownGrace: Duration
    public var maxBodyBytes: Int
    public var minimumBodyBytesPerSecond: Int
    public var bodyGracePeriod: Duration
    public var bufferedBodyBudgetBytes: Int
    public var maxConnections: Int
    public var migrationsDirectory: String
    public var logLevel: LogLevel
    public var logFile: String?
    /// When set, `/metrics` answers only `Authorization: Bearer <this>`.
    public var metricsToken: String?
    public var accessLog: Bool
    public var devRoutes: Bool
    /// Auth: required by `serve` (and `parley app ...`); nil when PARLEY_MASTER_KEY is unset.
    public var masterKey: MasterKey?
    public var previousMasterKey: MasterKey?
    public var tokenKeys: TokenKeyRing?
    public var tokenLifetimes: TokenLifetimes
    public var authRatePerMinute: Int
    public var authAccountRatePerMinute: Int
    public var authRegistrationsPerHour: Int
    public var authUsernameGraceDays: Int
    /// PARLEY_STATS_FLUSH_SECONDS: how often counted statistics are written.
    public var statsFlushSeconds: Int
    public var loginMaxFailures: Int
    public var loginFailureWindowSeconds: Int
    public var loginFirstDelaySeconds: Int
    public var trustedProxies: TrustedProxies
    public var passwordHashThreads: Int
    public var messaging = MessagingConfiguration()
    public var files = FilesConfiguration()
    public var realtime = RealtimeConfiguration()
    public var push = PushConfiguration()
    public var webhooks = WebhookConfiguration()
    public var calls = CallConfiguration()
    /// scrypt cost; not an environment setting (tests lower it, production keeps the default).
    public var passwordParameters: PasswordHasher.Parameters = .default

    public struct Setting: Sendable {
        public let name: String
        public let defaultValue: String
        public let help: String
    }

    public static let settings: [Setting] = [
        Setting(
            name: "DATABASE_URL", defaultValue: "postgresql://parley@127.0.0.1:5432/parley",
            help: "PostgreSQL connection URI or libpq key=value string"),
        Setting(
            name: "PARLEY_DATABASE_READ_URL", defaultValue: "(none: the primary answers every read)",
            help:
                "streaming replicas for history, sync, conversation lists and searches, as postgresql:// URIs "
                + "separated by commas (round robin); a read goes to one that has replayed the primary's position "
                + "sampled after it arrived (read-your-writes), else to DATABASE_URL"),
        Setting(
            name: "PARLEY_DATABASE_READ_MAX_WAIT_MS", defaultValue: "100",
            help: "how long such a read waits for a replica to catch up before the primary answers it (0: no wait)"),
        Setting(
            name: "PARLEY_HTTP_HOST", defaultValue: "127.0.0.1",
            help: "address to listen on (the Docker image sets 0.0.0.0)"),
        Setting(name: "PARLEY_HTTP_PORT", defaultValue: "8080", help: "TCP port to listen on (0 picks a free one)"),
        Setting(name: "PARLEY_EVENT_LOOPS", defaultValue: "number of cores", help: "event-loop threads"),
        Setting(
            name: "PARLEY_DB_POOL_SIZE", defaultValue: "2 per event loop, at least 4",
            help: "PostgreSQL connections in the pool (split across loops)"),
        Setting(
            name: "PARLEY_DB_ACQUIRE_TIMEOUT_MS", defaultValue: "5000",
            help: "wait for a pooled connection before answering 503"),
        Setting(
            name: "PARLEY_HEADER_TIMEOUT_SECONDS", defaultValue: "10",
            help: "a request's headers must arrive within this time"),
        Setting(
            name: "PARLEY_IDLE_TIMEOUT_SECONDS", defaultValue: "60",
            help: "idle keep-alive connections close after this time"),
        Setting(
            name: "PARLEY_SHUTDOWN_GRACE_SECONDS", defaultValue: "10",
            help: "on SIGTERM, in-flight requests get this long to finish"),
        Setting(
            name: "PARLEY_MAX_BODY_BYTES", defaultValue: "1048576",
            help: "default request body limit (routes may raise it)"),
        Setting(
            name: "PARLEY_HTTP_BODY_MIN_RATE_BYTES", defaultValue: "1024",
            help: "a request body slower than this many bytes a second on average is refused with 408 (0: no limit)"),
        Setting(
            name: "PARLEY_HTTP_BODY_GRACE_SECONDS", defaultValue: "10",
            help: "the body rate is checked only after this long, counted from the request's headers"),
        Setting(
            name: "PARLEY_HTTP_BUFFERED_BODY_BUDGET_BYTES", defaultValue: "268435456",
            help: "request bodies held in memory, all connections together; past it 503 (1015) and close"),
        Setting(
            name: "PARLEY_MAX_CONNECTIONS", defaultValue: "100000",
            help: "open connections beyond this are refused with 503 (at most 90% of the open-files limit)"),
        Setting(
            name: "PARLEY_MIGRATIONS_DIR", defaultValue: "./migrations",
            help: "directory of NNNN_name.sql migration files"),
        Setting(name: "PARLEY_LOG_LEVEL", defaultValue: "info", help: "debug, info, warning or error"),
        Setting(
            name: "PARLEY_LOG_FILE", defaultValue: "(stdout)",
            help: "write JSON log lines to this file instead of stdout"),
        Setting(name: "PARLEY_ACCESS_LOG", defaultValue: "1", help: "one JSON line per request (1) or none (0)"),
        Setting(
            name: "PARLEY_METRICS_TOKEN", defaultValue: "(none: open)",
            help: "bearer token /metrics requires (at least 16 characters; set it wherever /metrics is reachable)"),
        Setting(
            name: "PARLEY_DEV_ROUTES", defaultValue: "0",
            help: "enable benchmark and test-only routes (never in production)"),
        Setting(
            name: "PARLEY_MASTER_KEY", defaultValue: "(required)",
            help: "32 random bytes as 64 hex digits or base64: encrypts app secrets, derives the token key"),
        Setting(
            name: "PARLEY_PREVIOUS_MASTER_KEY", defaultValue: "(unset)",
            help: "during a master-key rotation, the old key: what it sealed still opens and its tokens verify"),
        Setting(
            name: "PARLEY_TOKEN_KEYS", defaultValue: "(derived from the master key)",
            help: "token signing keys `kid:base64key,...` (32+ bytes each); the first signs, all verify"),
        Setting(
            name: "PARLEY_ACCESS_TOKEN_TTL_SECONDS", defaultValue: "900",
            help: "access token lifetime (apps may override)"),
        Setting(
            name: "PARLEY_REFRESH_TOKEN_TTL_SECONDS", defaultValue: "2592000", help: "refresh token lifetime (30 days)"),
        Setting(
            name: "PARLEY_IM_TOKEN_TTL_SECONDS", defaultValue: "86400", help: "IM (WebSocket) token lifetime (24 h)"),
        Setting(
            name: "PARLEY_AUTH_RATE_PER_MINUTE", defaultValue: "120",
            help: "auth requests per minute per client address (0: unlimited)"),
        Setting(
            name: "PARLEY_AUTH_ACCOUNT_RATE_PER_MINUTE", defaultValue: "30",
            help: "auth requests per minute per account: logins per username, renewals per user (0: unlimited)"),
        Setting(
            name: "PARLEY_AUTH_REGISTRATIONS_PER_HOUR", defaultValue: "20",
            help:
                "registrations per hour per client address (IPv6 by /64) and app, across instances "
                + "(code 1044 + Retry-After; 0: unlimited)"),
        Setting(
            name: "PARLEY_AUTH_USERNAME_GRACE_DAYS", defaultValue: "30",
            help:
                "days a deleted account's username stays reserved before it may be registered again "
                + "(0: freed at once)"),
        Setting(
            name: "PARLEY_STATS_FLUSH_SECONDS", defaultValue: "10",
            help:
                "how often each instance adds the daily active users and stored messages it counted to the admin "
                + "API's statistics (GET /api/admin/stats; also at shutdown)"),
        Setting(
            name: "PARLEY_LOGIN_MAX_FAILURES", defaultValue: "10",
            help:
                "failed logins per account and client address (or known device) before progressive delays "
                + "(1 s doubling; code 1036 + Retry-After); the whole account allows 10 times as many"),
        Setting(
            name: "PARLEY_LOGIN_FAILURE_WINDOW_SECONDS", defaultValue: "900",
            help: "the longest failed-login delay, and how long a quiet source's failures are remembered (15 min)"),
        Setting(
            name: "PARLEY_LOGIN_FIRST_DELAY_SECONDS", defaultValue: "1",
            help: "the first failed-login delay past the allowance; each further failure doubles it"),
        Setting(
            name: "PARLEY_TRUSTED_PROXIES", defaultValue: "(none)",
            help: "proxy IPs/CIDRs whose X-Forwarded-For names the client address, comma-separated"),
        Setting(
            name: "PARLEY_PASSWORD_HASH_THREADS", defaultValue: "number of cores",
            help: "threads hashing passwords (scrypt), off the event loops"),
        Setting(
            name: "PARLEY_IM_MAX_TEXT_CHARS", defaultValue: "10000",
            help: "longest text message, richText text and draft"),
        Setting(
            name: "PARLEY_IM_MAX_EXTRA_BYTES", defaultValue: "4096", help: "largest `extra` of a message (JSON bytes)"),
        Setting(
            name: "PARLEY_IM_MAX_CUSTOM_BYTES", defaultValue: "16384",
            help: "largest content of custom, structured and call messages (JSON bytes)"),
        Setting(
            name: "PARLEY_IM_MAX_FORWARD_MESSAGES", defaultValue: "50", help: "most messages in one forward message"),
        Setting(name: "PARLEY_IM_GROUP_MEMBER_LIMIT", defaultValue: "2000", help: "most members in a group"),
        Setting(
            name: "PARLEY_IM_REVOKE_WINDOW_SECONDS", defaultValue: "120",
            help: "senders may revoke for this long (`parley app update --revoke-window` overrides per app)"),
        Setting(
            name: "PARLEY_IM_EDIT_WINDOW_SECONDS", defaultValue: "86400", help: "senders may edit text for this long"),
        Setting(
            name: "PARLEY_IM_SEND_RATE_PER_SECOND", defaultValue: "20",
            help:
                "messages per second a user may send (decimals allowed), REST and WebSocket together, counted per "
                + "instance (code 1118 + Retry-After; 0: unlimited)"),
        Setting(
            name: "PARLEY_IM_SEND_BURST", defaultValue: "100",
            help: "messages a user may send at once above that rate (a reconnecting client's outbox)"),
        Setting(
            name: "PARLEY_IM_SYNC_RETENTION_DAYS", defaultValue: "30",
            help: "sync's log of read marks, revokes and edits is kept at least this long; older cursors answer 1116"),
        Setting(
            name: "PARLEY_IM_SYNC_MAINTENANCE_SECONDS", defaultValue: "600",
            help:
                "how often the deployment's coordinator keeps sync's log: ranges made ahead, old ones dropped (0: never)"
        ),
        Setting(
            name: "PARLEY_IM_MAX_FRIENDS", defaultValue: "5000",
            help: "most friends per user; a request or accept past it on either side answers 1126"),
        Setting(
            name: "PARLEY_IM_MAX_BLOCKS", defaultValue: "1000", help: "most users one user may block (1128 beyond)"),
        Setting(
            name: "PARLEY_FILES_DIR", defaultValue: ".parley/files",
            help: "local file storage: blobs under DIR/blobs, uploads in progress under DIR/spool"),
        Setting(
            name: "PARLEY_FILES_MAX_BYTES", defaultValue: "104857600",
            help: "largest upload (100 MiB; `parley app files --max-bytes` lowers it per app)"),
        Setting(
            name: "PARLEY_FILES_USER_QUOTA_BYTES", defaultValue: "1073741824",
            help:
                "bytes a user's uploads may hold (1 GiB; code 1315; `parley app files --user-quota-bytes` "
                + "overrides per app; 0: unlimited)"),
        Setting(
            name: "PARLEY_FILES_APP_QUOTA_BYTES", defaultValue: "0",
            help:
                "bytes an app's files may hold, each content once (code 1316; `parley app files "
                + "--app-quota-bytes` overrides per app; 0: unlimited)"),
        Setting(
            name: "PARLEY_FILES_UPLOADS_PER_MINUTE", defaultValue: "60",
            help: "uploads per minute per user, counted per instance (code 1317 + Retry-After; 0: unlimited)"),
        Setting(
            name: "PARLEY_FILES_URL_TTL_SECONDS", defaultValue: "3600",
            help: "lifetime of signed download URLs when the caller names none (at most the maximum below)"),
        Setting(
            name: "PARLEY_FILES_URL_MAX_TTL_SECONDS", defaultValue: "86400",
            help: "the longest lifetime a caller may ask for a signed download URL (1 day; at most 7 days)"),
        Setting(
            name: "PARLEY_FILES_SWEEP_GRACE_SECONDS", defaultValue: "86400",
            help: "files no message or avatar references are removed after this long"),
        Setting(
            name: "PARLEY_FILES_SWEEP_INTERVAL_SECONDS", defaultValue: "600",
            help: "how often the file sweeper runs (0: never)"),
        Setting(
            name: "PARLEY_FILES_BACKEND", defaultValue: "local",
            help: "where file blobs live: local (PARLEY_FILES_DIR) or s3 (the PARLEY_S3_* settings)"),
        Setting(
            name: "PARLEY_S3_ENDPOINT", defaultValue: "(required for s3)",
            help: "S3 endpoint, e.g. https://s3.eu-west-1.amazonaws.com or http://minio:9000"),
        Setting(name: "PARLEY_S3_REGION", defaultValue: "us-east-1", help: "S3 region (signature scope)"),
        Setting(
            name: "PARLEY_S3_BUCKET", defaultValue: "(required for s3)", help: "bucket for blobs (created when missing)"
        ),
        Setting(name: "PARLEY_S3_ACCESS_KEY_ID", defaultValue: "(required for s3)", help: "S3 access key id"),
        Setting(name: "PARLEY_S3_SECRET_ACCESS_KEY", defaultValue: "(required for s3)", help: "S3 secret access key"),
        Setting(
            name: "PARLEY_S3_PATH_STYLE", defaultValue: "(1 unless the endpoint is *.amazonaws.com)",
            help: "path-style bucket addressing (MinIO) instead of virtual-hosted"),
        Setting(
            name: "PARLEY_S3_PRESIGN_ENDPOINT", defaultValue: "(PARLEY_S3_ENDPOINT)",
            help: "endpoint clients download from, when it differs from the one Parley reaches"),
        Setting(
            name: "PARLEY_PUBLIC_URL", defaultValue: "(http:// + the request's Host)",
            help:
                "origin of the URLs Parley hands out, e.g. https://im.example.com; required with PARLEY_TRUSTED_PROXIES"
        ),
        Setting(
            name: "PARLEY_WS_MAX_MESSAGE_BYTES", defaultValue: String(RealtimeConfiguration.defaultMaxMessageBytes),
            help: "largest WebSocket frame and message a client may send (close 1009 past it)"),
        Setting(
            name: "PARLEY_WS_PENDING_BYTES", defaultValue: "2097152",
            help: "request frames one WebSocket may have waiting for answers (close 4004 past it)"),
        Setting(
            name: "PARLEY_WS_PROBE_SOCKETS_PER_SESSION", defaultValue: "4",
            help: "past this many WebSockets of one session, a newer one pings the oldest; silent ones close (4001)"),
        Setting(
            name: "PARLEY_WS_PROBE_SECONDS", defaultValue: "10",
            help: "how long a probed WebSocket has to answer before it is closed (4001)"),
        Setting(
            name: "PARLEY_WS_MAX_SOCKETS_PER_SESSION", defaultValue: "16",
            help: "WebSocket connections one session may hold, live or not; a newer one closes the oldest (4502)"),
        Setting(
            name: "PARLEY_WS_PING_SECONDS", defaultValue: "30",
            help: "ping idle WebSocket connections this often; two missed pongs close them (4001)"),
        Setting(
            name: "PARLEY_WS_MAX_QUEUED_BYTES", defaultValue: "4194304",
            help: "unsent bytes per WebSocket connection before it is closed as a slow consumer (4000)"),
        Setting(
            name: "PARLEY_ROOM_HISTORY_MESSAGES", defaultValue: "200",
            help: "a chat room keeps (and returns) only its newest this many messages"),
        Setting(
            name: "PARLEY_ROOM_HISTORY_HOURS", defaultValue: "24",
            help: "... of at most this many hours; older ones are deleted"),
        Setting(
            name: "PARLEY_ROOM_ENTER_HISTORY", defaultValue: "20",
            help: "recent messages the room_enter ack carries, newest first (0: none)"),
        Setting(
            name: "PARLEY_ROOM_MAX_PER_CONNECTION", defaultValue: "10",
            help: "chat rooms one WebSocket may be inside at once (1507 past it)"),
        Setting(
            name: "PARLEY_PRESENCE_COALESCE_MS", defaultValue: "3000",
            help: "at most one presence event frame per subscriber connection per this window"),
        Setting(
            name: "PARLEY_PRESENCE_MAX_SUBSCRIPTIONS", defaultValue: "1000",
            help: "distinct users one user's connections may watch together (presence_subscribe; 1510 past it)"),
        Setting(
            name: "PARLEY_RELAY", defaultValue: "postgres",
            help: "how instances hear each other: postgres (LISTEN/NOTIFY) or nats://host:4222[,nats://...]"),
        Setting(
            name: "PARLEY_RELAY_SUBJECT_PREFIX", defaultValue: "parley",
            help: "first tokens of the relay's NATS subjects (deployments sharing NATS servers need their own)"),
        Setting(
            name: "PARLEY_PUSH_POLL_MS", defaultValue: "250",
            help: "how often this instance looks for messages to push (0: it pushes nothing; others still do)"),
        Setting(
            name: "PARLEY_PUSH_MAX_ATTEMPTS", defaultValue: "10",
            help: "attempts of a push (backoff 1 s, 2 s, 4 s ... at most 5 min) before it is given up"),
        Setting(
            name: "PARLEY_PUSH_LEASE_SECONDS", defaultValue: "30",
            help: "a push being delivered is left to its instance this long; after a crash another takes it over"),
        Setting(
            name: "PARLEY_PUSH_CA_FILE", defaultValue: "",
            help: "PEM of the CAs push trusts instead of the system's (tests, relays; unset for Apple's endpoints)"),
        Setting(
            name: "PARLEY_WEBHOOK_ALLOW_PRIVATE", defaultValue: "0",
            help: "1: webhook URLs may reach loopback, private and link-local addresses (tests, a backend on the LAN)"),
        Setting(
            name: "PARLEY_WEBHOOK_MAX_ATTEMPTS", defaultValue: "10",
            help: "attempts of a webhook event (backoff 1 s, 2 s, 4 s ... at most 5 min) before it is dead"),
        Setting(
            name: "PARLEY_WEBHOOK_POLL_MS", defaultValue: "250",
            help: "how often this instance looks for webhook events to deliver (0: it delivers none; others still do)"),
        Setting(
            name: "PARLEY_WEBHOOK_RETENTION_HOURS", defaultValue: "24",
            help: "delivered and dead webhook events stay listed (admin API) this long, then are deleted"),
        Setting(
            name: "PARLEY_CALL_SWEEP_MS", defaultValue: "500",
            help: "how often this instance times out unanswered call invitations (0: it does not; others still do)"),
        Setting(
            name: "PARLEY_TURN_SECRET", defaultValue: "(unset)",
            help: "coturn's static-auth-secret; with PARLEY_TURN_URIS, GET /api/calls/turn issues TURN credentials"),
        Setting(
            name: "PARLEY_TURN_URIS", defaultValue: "(unset)",
            help: "comma-separated TURN/STUN URIs handed out with the credentials (turn:host:3478, turns:host:5349)"),
        Setting(
            name: "PARLEY_TURN_TTL_SECONDS", defaultValue: "86400",
            help: "how long issued TURN credentials are valid"),
    ]

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// Reads the environment; a malformed value is an error naming the variable, never a silent default.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        func value(_ name: String) -> String? {
            guard let v = environment[name]?.trimmingCharacters(in: .whitespaces), !v.isEmpty else { return nil }
            return v
        }
        func integer(_ name: String, _ fallback: Int, range: ClosedRange<Int>) throws -> Int {
            guard let raw = value(name) else { return fallback }
            guard let parsed = Int(raw), range.contains(parsed) else {
                throw Invalid(
                    description: "\(name)=\(raw) is not an integer in \(range.lowerBound)...\(range.upperBound)")
            }
            return parsed
        }
        func decimal(_ name: String, _ fallback: Double, range: ClosedRange<Double>) throws -> Double {
            guard let raw = value(name) else { return fallback }
            guard let parsed = Double(raw), parsed.isFinite, range.contains(parsed) else {
                throw Invalid(
                    description: "\(name)=\(raw) is not a number in \(range.lowerBound)...\(range.upperBound)")
            }
            return parsed
        }
        func flag(_ name: String, _ fallback: Bool) throws -> Bool {
            guard let raw = value(name)?.lowercased() else { return fallback }
            switch raw {
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            default: throw Invalid(description: "\(name)=\(raw) is not a boolean (use 1 or 0)")
            }
        }
        databaseURL = value("DATABASE_URL") ?? Configuration.settings[0].defaultValue
        databaseReadURLs = try value("PARLEY_DATABASE_READ_URL").map(Self.replicaURLs) ?? []
        databaseReadMaxWait = .milliseconds(try integer("PARLEY_DATABASE_READ_MAX_WAIT_MS", 100, range: 0...60_000))
        httpHost = value("PARLEY_HTTP_HOST") ?? "127.0.0.1"
        httpPort = UInt16(try integer("PARLEY_HTTP_PORT", 8080, range: 0...65535))
        eventLoops = try integer("PARLEY_EVENT_LOOPS", ProcessInfo.processInfo.activeProcessorCount, range: 1...256)
        // Two connections per loop: on a small machine that runs PostgreSQL too, more backends than that only queue
        // for the same cores, and the event loops, one thread each among them, get a smaller share (the DB read's
        // p99 in scripts/bench shows it; BENCHMARKS.md has the figures).
        databasePoolSize = try integer("PARLEY_DB_POOL_SIZE", max(4, 2 * eventLoops), range: 1...1000)
        databaseAcquireTimeout = .milliseconds(try integer("PARLEY_DB_ACQUIRE_TIMEOUT_MS", 5000, range: 1...600_000))
        headerTimeout = .seconds(try integer("PARLEY_HEADER_TIMEOUT_SECONDS", 10, range: 1...3600))
        idleTimeout = .seconds(try integer("PARLEY_IDLE_TIMEOUT_SECONDS", 60, range: 1...86400))
        shutdownGrace = .seconds(try integer("PARLEY_SHUTDOWN_GRACE_SECONDS", 10, range: 0...3600))
        maxBodyBytes = try integer("PARLEY_MAX_BODY_BYTES", 1 << 20, range: 1024...(1 << 30))
        minimumBodyBytesPerSecond = try integer("PARLEY_HTTP_BODY_MIN_RATE_BYTES", 1024, range: 0...(1 << 30))
        bodyGracePeriod = .seconds(try integer("PARLEY_HTTP_BODY_GRACE_SECONDS", 10, range: 1...3600))
        // Below the largest body a route accepts, that request could never be received.
        bufferedBodyBudgetBytes = try integer(
            "PARLEY_HTTP_BUFFERED_BODY_BUDGET_BYTES", max(256 << 20, maxBodyBytes),
            range: max(maxBodyBytes, 1 << 20)...(1 << 40))
        maxConnections = try integer("PARLEY_MAX_CONNECTIONS", 100_000, range: 1...10_000_000)
        migrationsDirectory = value("PARLEY_MIGRATIONS_DIR") ?? "./migrations"
        let levelName = value("PARLEY_LOG_LEVEL") ?? "info"
        guard let level = LogLevel(name: levelName) else {
            throw Invalid(description: "PARLEY_LOG_LEVEL=\(levelName) is not one of debug, info, warning, error")
        }
        logLevel = level
        logFile = value("PARLEY_LOG_FILE")
        metricsToken = value("PARLEY_METRICS_TOKEN")
        if let token = metricsToken, token.utf8.count < 16 || !Authenticator.isToken(token.utf8) {
            throw Invalid(
                description: "PARLEY_METRICS_TOKEN must be at least 16 characters of [A-Za-z0-9-._~+/=]")
        }
        accessLog = try flag("PARLEY_ACCESS_LOG", true)
        devRoutes = try flag("PARLEY_DEV_ROUTES", false)
        do {
            masterKey = try value("PARLEY_MASTER_KEY").map { try MasterKey(parsing: $0) }
            previousMasterKey = try value("PARLEY_PREVIOUS_MASTER_KEY").map { text in
                do { return try MasterKey(parsing: text) } catch {
                    throw Invalid(description: "PARLEY_PREVIOUS_MASTER_KEY: \(error)")
                }
            }
            tokenKeys = try value("PARLEY_TOKEN_KEYS").map { try TokenKeyRing(parsing: $0) }
            trustedProxies = try value("PARLEY_TRUSTED_PROXIES").map { try TrustedProxies(parsing: $0) } ?? .none
        } catch {
            throw Invalid(description: String(describing: error)) // the parsers' messages never quote a key
        }
        tokenLifetimes = TokenLifetimes(
            access: try integer("PARLEY_ACCESS_TOKEN_TTL_SECONDS", 900, range: 30...86400),
            refresh: try integer("PARLEY_REFRESH_TOKEN_TTL_SECONDS", 30 * 86400, range: 60...(366 * 86400)),
            im: try integer("PARLEY_IM_TOKEN_TTL_SECONDS", 86400, range: 60...(30 * 86400)))
        authRatePerMinute = try integer("PARLEY_AUTH_RATE_PER_MINUTE", 120, range: 0...10_000_000)
        authAccountRatePerMinute = try integer("PARLEY_AUTH_ACCOUNT_RATE_PER_MINUTE", 30, range: 0...10_000_000)
        authRegistrationsPerHour = try integer("PARLEY_AUTH_REGISTRATIONS_PER_HOUR", 20, range: 0...1_000_000)
        authUsernameGraceDays = try integer("PARLEY_AUTH_USERNAME_GRACE_DAYS", 30, range: 0...36_500)
        statsFlushSeconds = try integer("PARLEY_STATS_FLUSH_SECONDS", 10, range: 1...3600)
        loginMaxFailures = try integer("PARLEY_LOGIN_MAX_FAILURES", 10, range: 1...1000)
        loginFailureWindowSeconds = try integer("PARLEY_LOGIN_FAILURE_WINDOW_SECONDS", 900, range: 10...86400)
        loginFirstDelaySeconds = try integer("PARLEY_LOGIN_FIRST_DELAY_SECONDS", 1, range: 1...3600)
        passwordHashThreads = try integer(
            "PARLEY_PASSWORD_HASH_THREADS", ProcessInfo.processInfo.activeProcessorCount,
            range: 1...64)
        messaging.maxTextCharacters = try integer("PARLEY_IM_MAX_TEXT_CHARS", 10_000, range: 1...1_000_000)
        messaging.maxExtraBytes = try integer("PARLEY_IM_MAX_EXTRA_BYTES", 4096, range: 0...1_048_576)
        messaging.maxCustomBytes = try integer("PARLEY_IM_MAX_CUSTOM_BYTES", 16_384, range: 64...1_048_576)
        messaging.maxForwardMessages = try integer("PARLEY_IM_MAX_FORWARD_MESSAGES", 50, range: 1...500)
        messaging.groupMemberLimit = try integer("PARLEY_IM_GROUP_MEMBER_LIMIT", 2000, range: 2...100_000)
        messaging.revokeWindowSeconds = try integer("PARLEY_IM_REVOKE_WINDOW_SECONDS", 120, range: 0...(30 * 86400))
        messaging.editWindowSeconds = try integer("PARLEY_IM_EDIT_WINDOW_SECONDS", 86400, range: 0...(365 * 86400))
        messaging.sendRatePerSecond = try decimal("PARLEY_IM_SEND_RATE_PER_SECOND", 20, range: 0...1_000_000)
        messaging.sendBurst = try integer("PARLEY_IM_SEND_BURST", 100, range: 1...1_000_000)
        messaging.syncRetentionDays = try integer("PARLEY_IM_SYNC_RETENTION_DAYS", 30, range: 1...3650)
        messaging.syncMaintenanceInterval = .seconds(
            try integer("PARLEY_IM_SYNC_MAINTENANCE_SECONDS", 600, range: 0...86_400))
        messaging.maxFriends = try integer("PARLEY_IM_MAX_FRIENDS", 5000, range: 1...100_000)
        messaging.maxBlocks = try integer("PARLEY_IM_MAX_BLOCKS", 1000, range: 1...100_000)
        let filesDirectory = value("PARLEY_FILES_DIR") ?? ".parley/files"
        switch value("PARLEY_FILES_BACKEND")?.lowercased() ?? "local" {
        case "local":
            files.backend = .local(directory: filesDirectory)
        case "s3":
            func required(_ name: String) throws -> String {
                guard let v = value(name) else { throw Invalid(description: "PARLEY_FILES_BACKEND=s3 needs \(name)") }
                return v
            }
            let pathStyle: Bool? = value("PARLEY_S3_PATH_STYLE") == nil ? nil : try flag("PARLEY_S3_PATH_STYLE", true)
            files.backend = .s3(
                S3Configuration(
                    endpoint: try required("PARLEY_S3_ENDPOINT"),
                    region: value("PARLEY_S3_REGION") ?? "us-east-1",
                    bucket: try required("PARLEY_S3_BUCKET"),
                    accessKeyID: try required("PARLEY_S3_ACCESS_KEY_ID"),
                    secretAccessKey: try required("PARLEY_S3_SECRET_ACCESS_KEY"),
                    pathStyle: pathStyle,
                    presignEndpoint: value("PARLEY_S3_PRESIGN_ENDPOINT")),
                spoolDirectory: filesDirectory + "/spool")
        case let other:
            throw Invalid(description: "PARLEY_FILES_BACKEND=\(other) must be local or s3")
        }
        files.maxUploadBytes = Int64(try integer("PARLEY_FILES_MAX_BYTES", 100 << 20, range: 1...(64 << 30)))
        files.userQuotaBytes = Int64(
            try integer("PARLEY_FILES_USER_QUOTA_BYTES", 1 << 30, range: 0...Int(Int64.max)))
        files.appQuotaBytes = Int64(try integer("PARLEY_FILES_APP_QUOTA_BYTES", 0, range: 0...Int(Int64.max)))
        files.uploadsPerMinute = try integer("PARLEY_FILES_UPLOADS_PER_MINUTE", 60, range: 0...1_000_000)
        files.maxURLTTLSeconds = try integer("PARLEY_FILES_URL_MAX_TTL_SECONDS", 86400, range: 60...(7 * 86400))
        files.defaultURLTTLSeconds = try integer(
            "PARLEY_FILES_URL_TTL_SECONDS", 3600, range: 1...files.maxURLTTLSeconds)
        files.sweepGraceSeconds = try integer("PARLEY_FILES_SWEEP_GRACE_SECONDS", 86400, range: 0...(365 * 86400))
        files.sweepIntervalSeconds = try integer("PARLEY_FILES_SWEEP_INTERVAL_SECONDS", 600, range: 0...86400)
        if let url = value("PARLEY_PUBLIC_URL") {
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw Invalid(description: "PARLEY_PUBLIC_URL=\(url) must start with http:// or https://")
            }
            files.publicBaseURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        }
        let wsMessageBytes = try integer(
            "PARLEY_WS_MAX_MESSAGE_BYTES", RealtimeConfiguration.defaultMaxMessageBytes, range: 1024...(64 << 20))
        realtime.webSocket.maxFrameBytes = wsMessageBytes
        realtime.webSocket.maxMessageBytes = wsMessageBytes
        // Any one frame must fit in the backlog.
        realtime.maxPendingRequestBytes = try integer(
            "PARLEY_WS_PENDING_BYTES", max(2 << 20, wsMessageBytes), range: wsMessageBytes...(1 << 30))
        realtime.probeConnectionsPerSession = try integer("PARLEY_WS_PROBE_SOCKETS_PER_SESSION", 4, range: 1...1000)
        realtime.socketProbeTimeout = .seconds(try integer("PARLEY_WS_PROBE_SECONDS", 10, range: 1...300))
        realtime.maxConnectionsPerSession = try integer("PARLEY_WS_MAX_SOCKETS_PER_SESSION", 16, range: 1...1000)
        realtime.webSocket.pingInterval = .seconds(try integer("PARLEY_WS_PING_SECONDS", 30, range: 1...3600))
        realtime.webSocket.maxBufferedOutgoingBytes = try integer(
            "PARLEY_WS_MAX_QUEUED_BYTES", 4 << 20,
            range: (64 << 10)...(1 << 30))
        realtime.rooms.historyMessages = try integer("PARLEY_ROOM_HISTORY_MESSAGES", 200, range: 1...100_000)
        realtime.rooms.historyHours = try integer("PARLEY_ROOM_HISTORY_HOURS", 24, range: 1...(24 * 365))
        realtime.rooms.enterHistory = try integer(
            "PARLEY_ROOM_ENTER_HISTORY", 20, range: 0...RoomConfiguration.maxEnterHistory)
        realtime.rooms.maxRoomsPerConnection = try integer("PARLEY_ROOM_MAX_PER_CONNECTION", 10, range: 1...1000)
        realtime.presenceCoalesceWindow = .milliseconds(
            try integer("PARLEY_PRESENCE_COALESCE_MS", 3000, range: 0...60_000))
        realtime.maxPresenceSubscriptions = try integer("PARLEY_PRESENCE_MAX_SUBSCRIPTIONS", 1000, range: 1...100_000)
        if let relay = value("PARLEY_RELAY"), relay != "postgres" {
            do {
                realtime.relay = .nats(try NATSConfiguration(urls: relay))
            } catch {
                throw Invalid(
                    description: "PARLEY_RELAY=\(relay): use postgres or nats://host:4222[,nats://...] (\(error))")
            }
        }
        if let prefix = value("PARLEY_RELAY_SUBJECT_PREFIX") {
            guard RealtimeConfiguration.isValidRelaySubjectPrefix(prefix) else {
                throw Invalid(
                    description:
                        "PARLEY_RELAY_SUBJECT_PREFIX=\(prefix): use dot-separated tokens of letters, digits, _ and -")
            }
            realtime.relaySubjectPrefix = prefix
        }
        push.pollInterval = .milliseconds(try integer("PARLEY_PUSH_POLL_MS", 250, range: 0...3_600_000))
        push.maxAttempts = try integer("PARLEY_PUSH_MAX_ATTEMPTS", 10, range: 1...100)
        push.leaseSeconds = try integer("PARLEY_PUSH_LEASE_SECONDS", 30, range: 1...3600)
        push.caFile = value("PARLEY_PUSH_CA_FILE")
        if let caFile = push.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw Invalid(description: "PARLEY_PUSH_CA_FILE=\(caFile) is not a readable file")
        }
        webhooks.allowPrivateAddresses = try flag("PARLEY_WEBHOOK_ALLOW_PRIVATE", false)
        webhooks.maxAttempts = try integer("PARLEY_WEBHOOK_MAX_ATTEMPTS", 10, range: 1...100)
        webhooks.pollInterval = .milliseconds(try integer("PARLEY_WEBHOOK_POLL_MS", 250, range: 0...3_600_000))
        webhooks.retentionHours = try integer("PARLEY_WEBHOOK_RETENTION_HOURS", 24, range: 1...(24 * 365))
        calls.sweepInterval = .milliseconds(try integer("PARLEY_CALL_SWEEP_MS", 500, range: 0...60_000))
        calls.turnSecret = value("PARLEY_TURN_SECRET")
        calls.turnURIs = (value("PARLEY_TURN_URIS") ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        calls.turnTTLSeconds = try integer("PARLEY_TURN_TTL_SECONDS", 86_400, range: 60...(7 * 86_400))
    }

    public static let missingMasterKey =
        "PARLEY_MASTER_KEY is not set: Parley needs a 32-byte master key to encrypt "
        + "app secrets and sign tokens. Generate one with `openssl rand -hex 32` and keep it secret and stable (a new key "
        + "makes stored app secrets unreadable); scripts/run creates .parley/master.key for local use"

    /// Behind a proxy (PARLEY_TRUSTED_PROXIES set) the request's Host and scheme are the proxy's to say: a proxy that
    /// terminates TLS would have Parley hand out `http://` download URLs (signed, readable on the wire) for an
    /// `https://` site. So serving there needs the public origin spelled out.
    public func requirePublicURLBehindProxies() throws {
        guard !trustedProxies.isEmpty, files.publicBaseURL == nil else { return }
        throw Invalid(
            description: "PARLEY_TRUSTED_PROXIES is set, so Parley serves behind a proxy that may terminate TLS: set "
                + "PARLEY_PUBLIC_URL to the origin clients reach (e.g. https://im.example.com)")
    }

    /// The auth feature's configuration, or an error saying how to provide the master key.
    public func authConfiguration() throws -> AuthConfiguration {
        guard let masterKey else { throw Invalid(description: Self.missingMasterKey) }
        var auth = AuthConfiguration(masterKey: masterKey, previousMasterKey: previousMasterKey, tokenKeys: tokenKeys)
        auth.lifetimes = tokenLifetimes
        auth.addressRatePerMinute = authRatePerMinute
        auth.accountRatePerMinute = authAccountRatePerMinute
        auth.registrationsPerHour = authRegistrationsPerHour
        auth.usernameGraceDays = authUsernameGraceDays
        auth.statisticsFlushInterval = .seconds(statsFlushSeconds)
        auth.maxLoginFailures = loginMaxFailures
        auth.loginFailureWindow = loginFailureWindowSeconds
        auth.loginFirstDelay = loginFirstDelaySeconds
        auth.trustedProxies = trustedProxies
        auth.passwordHashThreads = passwordHashThreads
        auth.passwordParameters = passwordParameters
        return auth
    }

    var httpServer: HTTPServerConfiguration {
        var config = HTTPServerConfiguration()
        config.host = httpHost
        config.port = httpPort
        config.headerTimeout = headerTimeout
        config.idleTimeout = idleTimeout
        config.shutdownGracePeriod = shutdownGrace
        config.defaultBodyLimit = maxBodyBytes
        config.minimumBodyBytesPerSecond = minimumBodyBytesPerSecond
        config.bodyGracePeriod = bodyGracePeriod
        config.bufferedBodyBudgetBytes = bufferedBodyBudgetBytes
        config.maxConnections = maxConnections
        return config
    }

    var postgres: PostgresConfiguration {
        var config = PostgresConfiguration(conninfo: databaseURL)
        config.poolSize = databasePoolSize
        config.acquireTimeout = databaseAcquireTimeout
        return config
    }

    /// One client configuration per replica, pooled like the primary's.
    var postgresReplicas: [PostgresConfiguration] {
        databaseReadURLs.map { url in
            var config = postgres
            config.conninfo = url
            return config
        }
    }

    /// PARLEY_DATABASE_READ_URL's URIs. A comma splits them only where a URI starts: a libpq URI may itself hold
    /// commas (several hosts, `postgresql://a:5432,b:5432/db`).
    static func replicaURLs(_ text: String) throws -> [String] {
        var urls: [String] = []
        var current = ""
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            if trimmed.hasPrefix("postgresql://") || trimmed.hasPrefix("postgres://") || current.isEmpty {
                if !current.isEmpty { urls.append(current) }
                current = trimmed
            } else {
                current += "," + trimmed
            }
        }
        if !current.isEmpty { urls.append(current) }
        guard !urls.isEmpty, urls.allSatisfy({ $0.hasPrefix("postgresql://") || $0.hasPrefix("postgres://") }) else {
            throw Invalid(
                description:
                    "PARLEY_DATABASE_READ_URL must be postgresql:// URIs separated by commas (one URI per replica)")
        }
        return urls
    }

    /// PARLEY_LOG_FILE, else stdout.
    func makeLogSink() -> LogSink {
        logFile.map { LogSink.file(path: $0, level: logLevel) } ?? LogSink(fd: 1, level: logLevel)
    }
}

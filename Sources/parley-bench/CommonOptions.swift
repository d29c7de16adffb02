import Glibc
import ParleyCrypto

/// Options every mode takes. The app credentials come from the environment (`BENCH_APP_KEY`,
/// `BENCH_APP_SECRET`), not from arguments, because `ps` shows arguments to every user of the machine.
struct CommonOptions {
    static let names: Set<String> = ["host", "port", "loops", "login-workers", "connect-concurrency", "run-id"]

    var host: String
    var port: UInt16
    /// `host:port` for WebSockets (modes that spread them over several instances take more).
    var server: ServerEndpoint
    var loops: Int
    var loginWorkers: Int
    var connectConcurrency: Int
    /// Prefix of every user id and `clientMsgId` of this run, so that runs against one database never collide.
    var runId: String
    var app: AppCredentials

    init(_ options: BenchOptions, defaultConcurrency: Int) throws(BenchError) {
        host = try options.string("host", "127.0.0.1")
        guard let port = UInt16(try options.string("port")), port > 0 else {
            throw BenchError("--port: expected 1-65535")
        }
        self.port = port
        server = try ServerEndpoint(host: host, port: port)
        loops = try options.int("loops", Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), in: 1...64)
        loginWorkers = try options.int("login-workers", 8, in: 1...256)
        connectConcurrency = try options.int("connect-concurrency", defaultConcurrency, in: 1...10_000)
        runId = try options.string("run-id", "b" + Hex.encode(SecureRandom.bytes(4)))
        // User ids allow [A-Za-z0-9_.@-]{1,64}; the run id leaves room for the suffixes (`-i19999`).
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-".utf8)
        guard (1...24).contains(runId.utf8.count), runId.utf8.allSatisfy(allowed.contains) else {
            throw BenchError("--run-id must be 1-24 of [A-Za-z0-9_-]")
        }
        app = AppCredentials(
            appKey: try BenchOptions.environment("BENCH_APP_KEY"),
            appSecret: try BenchOptions.environment("BENCH_APP_SECRET"))
    }

    var accounts: Accounts { Accounts(host: host, port: port, app: app) }
}

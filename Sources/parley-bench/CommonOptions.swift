import Glibc
import ParleyCrypto

/// Options every mode takes. The app credentials come from the environment (`BENCH_APP_KEY`,
/// `BENCH_APP_SECRET`), not from arguments, because `ps` shows arguments to every user of the machine.
struct CommonOptions {
    static let names: Set<String> = ["host", "port", "loops", "login-workers", "connect-concurrency", "run-id"]

    var host: String
    var port: UInt16
    var loops: Int
    var loginWorkers: Int
    var connectConcurrency: Int
    /// Prefix of every user id and `clientMsgId` of this run, so that runs against one database never collide.
    var runId: String
    var app: AppCredentials

    init(_ options: BenchOptions, defaultConcurrency: Int) throws(BenchError) {
        host = try options.string("host", "127.0.0.1")
        port = UInt16(try options.int("port", 0, in: 1...65535))
        loops = try options.int("loops", Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), in: 1...64)
        loginWorkers = try options.int("login-workers", 8, in: 1...256)
        connectConcurrency = try options.int("connect-concurrency", defaultConcurrency, in: 1...10_000)
        runId = try options.string("run-id", "b" + Hex.encode(SecureRandom.bytes(4)))
        guard runId.utf8.count <= 24, runId.utf8.allSatisfy({ $0 < 0x80 && ($0 == 0x2D || $0 == 0x5F
            || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)) }) else {
            throw BenchError("--run-id must be 1-24 of [A-Za-z0-9_-]")
        }
        app = AppCredentials(appKey: try BenchOptions.environment("BENCH_APP_KEY"),
                             appSecret: try BenchOptions.environment("BENCH_APP_SECRET"))
    }

    var accounts: Accounts { Accounts(host: host, port: port, app: app) }
}

import Glibc

/// A helper server (moto_server, nghttpd) run by a test, spawned with `posix_spawn`.
///
/// Not Foundation's `Process`: its children inherit the test process's blocked signals (the Swift runtime's
/// threads block SIGTERM), so `terminate()` did nothing and `waitUntilExit()` hung. Here the child starts with an
/// empty signal mask and default handlers, its output goes to a file, and `stop()` is SIGTERM, then SIGKILL
/// after a grace period, then `waitpid`.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// Where the child's stdout and stderr go.
    public let outputPath: String

    /// Starts `executable` with `arguments`; `environment` entries are added to (or replace) the test's own.
    public init(
        executable: String, arguments: [String], environment: [String: String] = [:],
        outputPath: String
    ) throws(ChildProcessError) {
        self.outputPath = outputPath
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var variables: [String: String] = [:]
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            index += 1
        }
        variables.merge(environment) { _, new in new }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else { throw .spawnFailed(executable, String(cString: strerror(status))) }
        self.pid = pid
    }

    /// Waits for the child to exit and returns its exit status (-1 when killed by a signal).
    public func waitForExit() async -> Int32 {
        // Polled with a task sleep, not a blocking waitpid: a blocked thread of the cooperative pool (two on this
        // machine) would freeze every other test's tasks while the child runs.
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 { return -1 }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    }

    /// `waitForExit` for code that cannot await (a static initializer): blocks the calling thread, so keep it to
    /// children that end at once.
    public func waitForExitBlocking() -> Int32 {
        var status: Int32 = 0
        guard waitpid(pid, &status, 0) == pid else { return -1 }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    }

    /// Whether the child is still running (false once it has exited, reaped or not).
    public var isRunning: Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// The child's output so far.
    public func output() -> String {
        guard let file = fopen(outputPath, "r") else { return "" }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// SIGTERM, SIGKILL if still alive after `grace`, and reap. Safe to call more than once.
    public func stop(grace: Duration = .seconds(3)) {
        guard kill(pid, SIGTERM) == 0 else { return }
        let deadline = ContinuousClock.now + grace
        var status: Int32 = 0
        while ContinuousClock.now < deadline {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || reaped < 0 { return }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
    }

    /// Waits until something accepts TCP connections on 127.0.0.1:`port`, or the child exits, or `timeout`.
    /// Polled with task sleeps, never blocking a thread of the cooperative pool (see `waitForExit`).
    public func waitUntilListening(port: Int, timeout: Duration = .seconds(30)) async throws(ChildProcessError) {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard isRunning else { throw .exited(output()) }
            if Self.canConnect(port: port) { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
        throw .notListening(port, output())
    }

    /// `waitUntilListening`, and the child stopped when it fails: how a test server that must be up is started.
    public func waitUntilListeningOrStop(port: Int, timeout: Duration = .seconds(30)) async throws(ChildProcessError) {
        do {
            try await waitUntilListening(port: port, timeout: timeout)
        } catch {
            stop()
            throw error
        }
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }

    /// A TCP port that nothing uses, on IPv4 and IPv6: random in 15000-31999, below Linux's ephemeral range, so
    /// no outgoing connection takes it between this check and the server's bind (as `free_port` in the scripts).
    public static func unusedPort() -> Int {
        while true {
            let port = Int.random(in: 15000...31999)
            if canBind(port: port, family: AF_INET) && canBind(port: port, family: AF_INET6) { return port }
        }
    }

    private static func canBind(port: Int, family: Int32) -> Bool {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return family == AF_INET6 } // no IPv6 on this machine: nothing to collide with
        defer { close(fd) }
        if family == AF_INET {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            } == 0
        }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        } == 0
    }

    /// The first executable named `name` in `PATH` or in `extraDirectories`.
    public static func find(_ name: String, extraDirectories: [String] = ["/usr/sbin", "/usr/bin"]) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? ""
        let directories = path.split(separator: ":").map(String.init) + extraDirectories
        return directories.map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
    }
}

public enum ChildProcessError: Error, CustomStringConvertible {
    case spawnFailed(String, String)
    case exited(String)
    case notListening(Int, String)

    public var description: String {
        switch self {
        case .spawnFailed(let executable, let reason): "cannot start \(executable): \(reason)"
        case .exited(let output): "the process exited early; its output:\n\(output)"
        case .notListening(let port, let output): "nothing listens on port \(port); output:\n\(output)"
        }
    }
}

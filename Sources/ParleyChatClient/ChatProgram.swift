import Glibc
import ParleyNet

/// `parley chat`: logs in, keeps a WebSocket open, and runs the commands of stdin (or `--send`) while printing
/// what arrives. Returns the exit status: 0 done, 1 failed (login, a scripted command, a terminal disconnect, the
/// timeout), 2 usage, 130 interrupted.
///
/// The session ends at `/quit`, at a terminal disconnect, at `--timeout`, on Ctrl-C, or when both the input is
/// done (end of stdin, or the `--send` texts sent) and `--wait-for` messages arrived.
public enum ChatProgram {
    public static let usage = ChatOptions.usage

    private enum Ending: Sendable {
        case quit
        case inputDone
        case received
        case disconnected(String)
        case timedOut
        case interrupted
    }

    public static func run(_ arguments: [String], environment: [String: String], console: Console = .standard) async
        -> Int32
    {
        let options: ChatOptions
        do {
            options = try ChatOptions.parse(arguments, environment: environment)
        } catch {
            console.warn("\(error)\nrun `parley chat --help` for usage")
            return 2
        }
        if options.showHelp {
            console.say("USAGE\n\(usage)\n\n" + ChatCommand.helpText)
            return 0
        }
        guard let password = options.password ?? askPassword(for: options.username) else {
            console.warn("no password: give --password or PARLEY_CHAT_PASSWORD (or run it on a terminal to be asked)")
            return 2
        }

        let api = ParleyAPI(server: options.server, appKey: options.appKey)
        let me: AuthSession
        do {
            me = try await logIn(api, options, password: password, console: console)
        } catch {
            console.warn("cannot log in to \(options.server): \(error)")
            return 1
        }
        console.say("logged in as \(me.username ?? me.nickname) (user id \(me.userId))")
        let session = ChatSession(api: api, me: me, server: options.server, console: console)

        let (endings, ending) = AsyncStream.makeStream(of: Ending.self)
        Task { ending.yield(.disconnected(await session.maintainConnection())) }
        Task {
            if let target = options.target { await session.run(.open(target)) }
            if !options.sends.isEmpty {
                for text in options.sends { await session.run(.send(text)) }
            } else {
                let interactive = Console.isInteractive
                if interactive { console.say("type /help for commands") }
                for await line in Console.standardInputLines() {
                    let command: ChatCommand?
                    do {
                        command = try ChatCommand.parse(line)
                    } catch {
                        console.warn("error: \(error)")
                        await session.recordFailure()
                        continue
                    }
                    guard let command else { continue }
                    if command == .quit {
                        ending.yield(.quit)
                        return
                    }
                    await session.run(command)
                }
            }
            ending.yield(.inputDone)
        }
        if options.waitFor > 0 {
            Task {
                await session.waitForReceived(options.waitFor)
                ending.yield(.received)
            }
        }
        if let timeout = options.timeout {
            Task {
                try? await Task.sleep(for: timeout)
                ending.yield(.timedOut)
            }
        }
        Task {
            _ = await TerminationSignals.next()
            ending.yield(.interrupted)
        }

        var inputDone = false
        var received = options.waitFor == 0
        var status: Int32 = 0
        for await event in endings {
            switch event {
            case .quit:
                break
            case .inputDone:
                inputDone = true
                guard received else { continue }
            case .received:
                received = true
                guard inputDone else { continue }
            case .disconnected(let reason):
                console.warn(reason)
                status = 1
            case .timedOut:
                let got = await session.received
                console.warn("timed out" + (received ? "" : " with \(got) of \(options.waitFor) messages received"))
                status = 1
            case .interrupted:
                status = 130
            }
            break
        }
        await session.shutdown()
        if status == 0, await session.failedCommands > 0, !Console.isInteractive {
            console.warn("\(await session.failedCommands) command(s) failed")
            status = 1
        }
        return status
    }

    /// Logs in; with `--register`, creates the account first (or logs in when the name is taken, so scripts and the
    /// README tour can be run again).
    private static func logIn(
        _ api: ParleyAPI, _ options: ChatOptions, password: String,
        console: Console
    ) async throws(ParleyAPIError) -> AuthSession {
        guard options.register else { return try await api.login(username: options.username, password: password) }
        do {
            let session = try await api.register(
                username: options.username, password: password, nickname: options.nickname)
            console.say("registered \(options.username)")
            return session
        } catch  where error.code == 1040 {
            console.say("\(options.username) exists; logging in")
            return try await api.login(username: options.username, password: password)
        }
    }

    /// Asks on the terminal without echo; nil when there is no terminal.
    private static func askPassword(for username: String) -> String? {
        guard Console.isInteractive, let typed = getpass("password for \(username): ") else { return nil }
        return String(cString: typed)
    }
}

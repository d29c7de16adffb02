import Foundation
import Glibc
import ParleyApp
import ParleyChatClient
import ParleyNet
import ParleyObservability
import ParleyPostgres

/// `parley <command>`: parses arguments, reads the configuration, runs the command, returns the exit code.
enum CommandLineInterface {
    static let usage = """
        parley — a self-hosted instant-messaging server

        USAGE
          parley serve [--migrate]   serve HTTP and WebSocket; --migrate applies pending migrations first
          parley migrate             apply pending migrations and exit
          parley migrate status      list applied and pending migrations
          parley healthcheck         GET /healthz on PARLEY_HTTP_HOST:PARLEY_HTTP_PORT; exit 0 on 200 (container HEALTHCHECK)
        \(AppCommand.usage)
        \(ReleaseCommand.usage)
        \(UserCommand.usage)
        \(MasterKeyCommand.usage)
        \(ChatProgram.usage)
          parley --help              this text

        SETTINGS (environment variables)
        """

    static func run(_ arguments: [String]) async -> Int32 {
        guard let command = arguments.first, !["-h", "--help", "help"].contains(command) else {
            printUsage()
            return arguments.isEmpty ? 2 : 0
        }
        // A client of a server, not a server: it needs none of the server's settings (no master key, no database).
        if command == "chat" {
            return await ChatProgram.run(Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        }
        let configuration: Configuration
        do {
            configuration = try Configuration()
        } catch {
            printError("configuration error: \(error)")
            return 2
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "serve":
                let unknown = rest.filter { $0 != "--migrate" }
                guard unknown.isEmpty else { return usageError("unknown option for serve: \(unknown[0])") }
                return try await serve(configuration, applyMigrations: rest.contains("--migrate"))
            case "migrate":
                return try await migrate(configuration, statusOnly: rest == ["status"], extra: rest)
            case "healthcheck":
                guard rest.isEmpty else { return usageError("unknown option for healthcheck: \(rest[0])") }
                return healthcheck(configuration)
            case "app":
                do {
                    try await AppCommand.run(rest, configuration: configuration) { print($0) }
                } catch let error as AppCommand.UsageError {
                    return usageError(error.description)
                }
                return 0
            case "release":
                do {
                    try await ReleaseCommand.run(rest, configuration: configuration) { print($0) }
                } catch let error as AppCommand.UsageError {
                    return usageError(error.description)
                } catch let error as ReleaseCommand.Refused {
                    printError("parley release: \(error.description)")
                    return 1
                }
                return 0
            case "user":
                do {
                    try await UserCommand.run(rest, configuration: configuration) { print($0) }
                } catch let error as AppCommand.UsageError {
                    return usageError(error.description)
                }
                return 0
            case "rotate-master-key":
                do {
                    try await MasterKeyCommand.run(rest, configuration: configuration) { print($0) }
                } catch let error as AppCommand.UsageError {
                    return usageError(error.description)
                } catch let error as MasterKeyCommand.Refused {
                    printError("parley rotate-master-key: \(error.description)")
                    return 1
                }
                return 0
            default:
                return usageError("unknown command: \(command)")
            }
        } catch {
            printError("parley \(command): \(error)")
            return 1
        }
    }

    static func serve(_ configuration: Configuration, applyMigrations: Bool) async throws -> Int32 {
        // Every connection is a descriptor: use all the hard limit allows (the soft one is often 1,024).
        OpenFilesLimit.raiseToHardLimit()
        try await Application(configuration: configuration).run(applyMigrations: applyMigrations)
        return 0
    }

    static func migrate(_ configuration: Configuration, statusOnly: Bool, extra: [String]) async throws -> Int32 {
        guard extra.isEmpty || statusOnly else { return usageError("unknown option for migrate: \(extra[0])") }
        try await CommandContext.with(configuration) { context in
            if statusOnly {
                let status = try await context.migrator.status()
                for name in status.applied { print("applied  \(name)") }
                for name in status.pending { print("pending  \(name)") }
            } else {
                let applied = try await context.migrator.migrate()
                print(
                    applied.isEmpty
                        ? "nothing to apply"
                        : "applied \(applied.count) migration(s): \(applied.joined(separator: ", "))")
            }
        }
        return 0
    }

    static func healthcheck(_ configuration: Configuration) -> Int32 {
        do {
            let status = try HealthProbe.check(host: configuration.httpHost, port: configuration.httpPort)
            guard status == 200 else {
                printError("parley healthcheck: /healthz answered HTTP \(status)")
                return 1
            }
            return 0
        } catch {
            printError("parley healthcheck: \(error)")
            return 1
        }
    }

    static func printUsage() {
        var text = usage + "\n"
        let width = max(32, (Configuration.settings.map(\.name.count).max() ?? 0) + 2) // long names must not be cut
        for setting in Configuration.settings {
            let name = setting.name.padding(toLength: width, withPad: " ", startingAt: 0)
            text += "  \(name)\(setting.help) (default: \(setting.defaultValue))\n"
        }
        print(text, terminator: "")
    }

    static func usageError(_ message: String) -> Int32 {
        printError("\(message)\nrun `parley --help` for usage")
        return 2
    }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

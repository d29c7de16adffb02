import ParleyAuth

/// `parley user ban|unban --app APP_KEY USER_ID`: an operator's ban, straight against the database. Running servers
/// learn of it through NOTIFY at once (the sessions end, their sockets close with 4501). Output goes through
/// `output` (stdout in the executable, a buffer in tests).
public enum UserCommand {
    public static let usage = """
          parley user ban --app APP_KEY USER_ID
                                     ban an account: every session ends (sockets close with 4501), password and
                                     signed logins answer 1043 until it is unbanned; its data stays
          parley user unban --app APP_KEY USER_ID
                                     let a banned account sign in again
        """

    /// Runs the subcommand; throws `AppCommand.UsageError` for bad arguments and unknown apps or users, other errors
    /// for failures.
    public static func run(
        _ arguments: [String], configuration: Configuration,
        output: @escaping (String) -> Void
    ) async throws {
        let subcommand = try AppCommand.UsageError.subcommand(of: arguments, command: "user", usage: usage)
        guard ["ban", "unban"].contains(subcommand) else {
            throw AppCommand.UsageError(description: "unknown user subcommand: \(subcommand)\n" + usage)
        }
        var options = try AppCommand.Options(Array(arguments.dropFirst()))
        guard let appKey = options.take("--app"), !appKey.isEmpty else {
            throw AppCommand.UsageError(description: "user \(subcommand) needs --app APP_KEY")
        }
        let userId = try options.takePositional("USER_ID")
        try options.finish()
        try await CommandContext.with(configuration) { context in
            try await context.requireSchema()
            guard let tenant = try await AppRepository(database: context.database).find(key: appKey) else {
                throw AppCommand.UsageError(description: "no app with key \(appKey)")
            }
            let bans = AccountBans(database: context.database)
            let outcome =
                subcommand == "ban"
                ? try await bans.ban(appId: tenant.id, userId: userId)
                : try await bans.unban(appId: tenant.id, userId: userId)
            switch outcome {
            case .unknownUser:
                throw AppCommand.UsageError(description: "no user \(userId) in app \(appKey)")
            case .done(let ended) where subcommand == "ban":
                output("banned \(userId); \(ended) session(s) ended")
            case .done:
                output("unbanned \(userId)")
            }
        }
    }
}

/// The options of `parley chat`, from its arguments with environment fallbacks. Pure: parsing reads nothing but
/// its inputs, so the tests feed it arguments and an environment.
public struct ChatOptions: Sendable, Equatable {
    public static let defaultServer = "http://127.0.0.1:8080"

    public static let usage = """
          parley chat [--server URL] --app-key KEY --user NAME [--password PW] [--register] [--nickname NAME]
                      [--to TARGET] [--send TEXT]... [--wait-for N] [--timeout SECONDS]
                                     a terminal chat client: logs in (--register creates the account first), connects
                                     to /ws and reads commands from stdin (/help lists them; works from a pipe too).
                                     --to opens a conversation at start (a user id, g_GROUP, a conversation id);
                                     --send sends TEXT there and finishes without reading stdin; --wait-for finishes
                                     only after N messages from others arrived; --timeout gives up (exit 1) after
                                     SECONDS. Environment: PARLEY_CHAT_SERVER (default http://127.0.0.1:8080),
                                     PARLEY_CHAT_APP_KEY, PARLEY_CHAT_USER, PARLEY_CHAT_PASSWORD (asked for on a
                                     terminal when missing)
        """

    public var server: ServerAddress
    public var appKey: String
    public var username: String
    /// nil: ask on the terminal (`getpass`), or fail when there is none.
    public var password: String?
    /// Create the account first (an existing one is logged in to instead).
    public var register = false
    public var nickname: String?
    /// The conversation to open at start.
    public var target: ConversationTarget?
    /// Texts to send to `target`; when any are given, stdin is not read.
    public var sends: [String] = []
    /// Finish only after this many messages from others arrived (live or through sync).
    public var waitFor = 0
    /// The whole session's bound; reaching it is a failure (exit 1).
    public var timeout: Duration?
    public var showHelp = false

    /// Parses `arguments` (those after `chat`); the environment supplies what the arguments leave out.
    public static func parse(_ arguments: [String], environment: [String: String]) throws(ChatUsageError) -> ChatOptions
    {
        var values: [String: String] = [:]
        var sends: [String] = []
        var flags: Set<String> = []
        let valued: Set<String> = [
            "--server", "--app-key", "--user", "--password", "--nickname", "--to", "--send",
            "--wait-for", "--timeout",
        ]
        var index = 0
        while index < arguments.count {
            var name = arguments[index]
            var value: String?
            if let equals = name.firstIndex(of: "="), name.hasPrefix("--") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            index += 1
            switch name {
            case "-h", "--help", "--register":
                guard value == nil else { throw ChatUsageError("\(name) takes no value") }
                flags.insert(name == "-h" ? "--help" : name)
            case _ where valued.contains(name):
                if value == nil {
                    guard index < arguments.count else { throw ChatUsageError("\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                if name == "--send" {
                    sends.append(value!)
                } else {
                    guard values[name] == nil else { throw ChatUsageError("\(name) given twice") }
                    values[name] = value!
                }
            default:
                throw ChatUsageError("unknown option for chat: \(name)")
            }
        }

        func setting(_ option: String, _ variable: String) -> String? {
            if let value = values[option] { return value }
            if let value = environment[variable], !value.isEmpty { return value }
            return nil
        }
        let showHelp = flags.contains("--help")
        let server = try ServerAddress(parsing: setting("--server", "PARLEY_CHAT_SERVER") ?? defaultServer)
        let appKey = setting("--app-key", "PARLEY_CHAT_APP_KEY")
        let username = setting("--user", "PARLEY_CHAT_USER")
        if !showHelp {
            guard appKey != nil else { throw ChatUsageError("chat needs --app-key KEY (or PARLEY_CHAT_APP_KEY)") }
            guard username != nil else { throw ChatUsageError("chat needs --user NAME (or PARLEY_CHAT_USER)") }
        }
        var options = ChatOptions(
            server: server, appKey: appKey ?? "", username: username ?? "",
            password: setting("--password", "PARLEY_CHAT_PASSWORD"))
        options.showHelp = showHelp
        options.register = flags.contains("--register")
        options.nickname = values["--nickname"]
        options.sends = sends
        if let target = values["--to"] {
            options.target = try ConversationTarget(parsing: target)
        }
        if !sends.isEmpty && options.target == nil { throw ChatUsageError("--send needs --to TARGET") }
        if let text = values["--wait-for"] {
            guard let count = Int(text), count >= 0 else {
                throw ChatUsageError("--wait-for takes a count (0 or more)")
            }
            options.waitFor = count
        }
        if let text = values["--timeout"] {
            guard let seconds = Double(text), seconds > 0, seconds <= 86400 * 365 else {
                throw ChatUsageError("--timeout takes seconds (more than 0)")
            }
            options.timeout = .milliseconds(Int64((seconds * 1000).rounded(.up)))
        }
        return options
    }

    public init(server: ServerAddress, appKey: String, username: String, password: String? = nil) {
        self.server = server
        self.appKey = appKey
        self.username = username
        self.password = password
    }
}

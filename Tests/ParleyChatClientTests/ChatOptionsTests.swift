import ParleyChatClient
import Testing

/// `parley chat`'s command line: arguments first, the environment for what they leave out, refusals named.
@Suite struct ChatOptionsTests {
    private let minimal = ["--app-key", "ak_x", "--user", "alice"]

    @Test func readsEveryOption() throws {
        let options = try ChatOptions.parse(
            [
                "--server", "http://10.0.0.5:9000/", "--app-key", "ak_1", "--user", "alice",
                "--password", "pw pw pw", "--register", "--nickname", "Alice",
                "--to", "u_bob", "--send", "hi", "--send=again", "--wait-for", "3",
                "--timeout", "2.5",
            ], environment: [:])
        #expect(options.server == (try ServerAddress(parsing: "10.0.0.5:9000")))
        #expect(options.server.baseURL == "http://10.0.0.5:9000")
        #expect(options.appKey == "ak_1")
        #expect(options.username == "alice")
        #expect(options.password == "pw pw pw")
        #expect(options.register)
        #expect(options.nickname == "Alice")
        #expect(options.target == .user("u_bob"))
        #expect(options.sends == ["hi", "again"])
        #expect(options.waitFor == 3)
        #expect(options.timeout == .milliseconds(2500))
    }

    @Test func fallsBackToTheEnvironmentAndTheDefaultServer() throws {
        let environment = [
            "PARLEY_CHAT_APP_KEY": "ak_env", "PARLEY_CHAT_USER": "bob", "PARLEY_CHAT_PASSWORD": "secret12",
        ]
        let options = try ChatOptions.parse([], environment: environment)
        #expect(options.appKey == "ak_env")
        #expect(options.username == "bob")
        #expect(options.password == "secret12")
        #expect(options.server.baseURL == "http://127.0.0.1:8080")
        #expect(!options.register && options.sends.isEmpty && options.waitFor == 0 && options.timeout == nil)
    }

    @Test func argumentsWinOverTheEnvironment() throws {
        let environment = [
            "PARLEY_CHAT_SERVER": "http://127.0.0.1:1", "PARLEY_CHAT_USER": "bob", "PARLEY_CHAT_APP_KEY": "ak_env",
        ]
        let options = try ChatOptions.parse(
            ["--server", "localhost:8081", "--user", "carol"], environment: environment)
        #expect(options.server.host == "localhost" && options.server.port == 8081)
        #expect(options.username == "carol")
        #expect(options.appKey == "ak_env")
        #expect(options.password == nil) // asked for on a terminal
    }

    @Test func emptyEnvironmentValuesCountAsUnset() {
        #expect(throws: ChatUsageError("chat needs --app-key KEY (or PARLEY_CHAT_APP_KEY)")) {
            try ChatOptions.parse(["--user", "alice"], environment: ["PARLEY_CHAT_APP_KEY": ""])
        }
    }

    @Test func helpNeedsNothingElse() throws {
        #expect(try ChatOptions.parse(["--help"], environment: [:]).showHelp)
        #expect(try ChatOptions.parse(["-h"], environment: [:]).showHelp)
    }

    @Test func refusesWhatItCannotUse() {
        let refused: [([String], String)] = [
            (["--user", "alice"], "chat needs --app-key KEY (or PARLEY_CHAT_APP_KEY)"),
            (["--app-key", "ak_x"], "chat needs --user NAME (or PARLEY_CHAT_USER)"),
            (minimal + ["--bogus"], "unknown option for chat: --bogus"),
            (minimal + ["--to"], "--to needs a value"),
            (minimal + ["--user", "bob"], "--user given twice"),
            (minimal + ["--register=yes"], "--register takes no value"),
            (minimal + ["--send", "hi"], "--send needs --to TARGET"),
            (minimal + ["--wait-for", "-1"], "--wait-for takes a count (0 or more)"),
            (minimal + ["--wait-for", "many"], "--wait-for takes a count (0 or more)"),
            (minimal + ["--timeout", "0"], "--timeout takes seconds (more than 0)"),
        ]
        for (arguments, message) in refused {
            #expect(throws: ChatUsageError(message), "\(arguments)") {
                try ChatOptions.parse(arguments, environment: [:])
            }
        }
    }

    @Test func refusesServersItCannotReach() {
        for server in [
            "https://chat.example.com", "wss://x:443", "http://h:0", "http://h:99999", "http://h:80/api", "http://",
            "http://[::1]:8080",
        ] {
            #expect(throws: ChatUsageError.self, "\(server)") {
                try ChatOptions.parse(minimal + ["--server", server], environment: [:])
            }
        }
    }

    @Test func serverAddressesDefaultToPort80() throws {
        let address = try ServerAddress(parsing: "http://parley.internal")
        #expect(address.host == "parley.internal" && address.port == 80)
        #expect(try ServerAddress(parsing: "ws://127.0.0.1:8080").baseURL == "http://127.0.0.1:8080")
    }
}

/// docs/protocol.md's close codes: 4000-4499 and anything unplanned mean "reconnect and sync", 4500-4999 do not.
@Suite struct CloseReasonTests {
    @Test func reconnectsAfterTransientClosesOnly() {
        for code: UInt16 in [1000, 1001, 1011, 4000, 4001, 4002, 4003, 4499] {
            #expect(IMCloseReason.server(code: code, reason: "").shouldReconnect, "\(code)")
        }
        #expect(IMCloseReason.server(code: nil, reason: "").shouldReconnect)
        #expect(IMCloseReason.lost("reset").shouldReconnect)
        for code: UInt16 in [4500, 4501, 4999] {
            #expect(!IMCloseReason.server(code: code, reason: "").shouldReconnect, "\(code)")
        }
        #expect(!IMCloseReason.byClient.shouldReconnect)
    }
}

import Testing

@testable import ParleyNATS

@Suite struct ConfigurationTests {
    @Test func readsOneServerWithTheDefaultPort() throws {
        #expect(try NATSConfiguration.parseServers("nats://nats.internal") == [NATSServerURL(host: "nats.internal")])
        #expect(
            try NATSConfiguration.parseServers("NATS://10.0.0.1:4223/") == [NATSServerURL(host: "10.0.0.1", port: 4223)]
        )
    }

    @Test func readsAListWithCredentialsAndSpaces() throws {
        let servers = try NATSConfiguration.parseServers(
            "nats://alice:s3cret@a:4222, nats://t0k3n@b:4223 ,nats://[::1]:4224,nats://c")
        #expect(
            servers == [
                NATSServerURL(host: "a", port: 4222, user: "alice", password: "s3cret"),
                NATSServerURL(host: "b", port: 4223, token: "t0k3n"),
                NATSServerURL(host: "::1", port: 4224),
                NATSServerURL(host: "c"),
            ])
        #expect(servers[2].address == "[::1]:4224")
        #expect(try NATSConfiguration(urls: "nats://a,nats://b").servers.count == 2)
    }

    @Test func decodesPercentEscapesInCredentials() throws {
        let servers = try NATSConfiguration.parseServers("nats://us%40er:p%3Ass%2C%25w@h:1,nats://t%40k@h")
        #expect(servers[0].user == "us@er")
        #expect(servers[0].password == "p:ss,%w")
        #expect(servers[1].token == "t@k")
        // An `@` left raw in the password: the last `@` ends the credentials.
        #expect(try NATSConfiguration.parseServers("nats://u:p@ss@h")[0].password == "p@ss")
        #expect(try NATSConfiguration.parseServers("nats://u:@h")[0].password == "")
    }

    @Test(arguments: [
        "", " ", "nats://a,", ",nats://a", "a:4222", "tls://a:4222", "ws://a", "nats://", "nats://:4222", "nats://a:",
        "nats://a:0", "nats://a:65536", "nats://a:42x", "nats://a:-1", "nats://a/path", "nats://a?x=1", "nats://[::1",
        "nats://[::1]x", "nats://@a", "nats://:pw@a", "nats://u:p%zz@a", "nats://u:p%@a", "nats://a b:4222",
        "nats://u:%FF@a",
    ])
    func refusesMalformedLists(list: String) {
        #expect(throws: NATSConfigurationError.self) { try NATSConfiguration.parseServers(list) }
    }

    @Test func neverShowsCredentials() throws {
        let configuration = try NATSConfiguration(urls: "nats://alice:hunter2@a:4222,nats://t0k3n@b")
        #expect(configuration.servers[0].description == "nats://<redacted>@a:4222")
        #expect(!configuration.description.contains("hunter2"))
        #expect(!configuration.description.contains("t0k3n"))
        #expect(!"\(configuration.servers)".contains("hunter2"))
        do {
            _ = try NATSConfiguration.parseServers("nats://alice:hunter2@a:99999")
        } catch {
            #expect(!error.description.contains("hunter2"))
            #expect(error.description.contains("entry 1"))
        }
    }
}

import Testing

@testable import ParleyApp

/// PARLEY_DATABASE_READ_URL and PARLEY_DATABASE_READ_MAX_WAIT_MS.
@Suite struct ReadReplicaConfigurationTests {
    func configuration(_ environment: [String: String]) throws -> Configuration {
        try Configuration(
            environment: ["DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"].merging(environment) { $1 })
    }

    @Test func withoutTheSettingEveryReadStaysOnThePrimary() throws {
        let plain = try configuration([:])
        #expect(plain.databaseReadURLs.isEmpty && plain.postgresReplicas.isEmpty)
        #expect(plain.databaseReadMaxWait == .milliseconds(100))
    }

    @Test func commasSeparateURIsButNotTheHostsOfOne() throws {
        let urls = try configuration([
            "PARLEY_DATABASE_READ_URL":
                "postgresql://r@replica-1:5432/parley, postgres://r@a:5432,b:5433/parley?target_session_attrs=any,",
            "PARLEY_DATABASE_READ_MAX_WAIT_MS": "0",
        ])
        #expect(
            urls.databaseReadURLs == [
                "postgresql://r@replica-1:5432/parley", "postgres://r@a:5432,b:5433/parley?target_session_attrs=any",
            ])
        #expect(urls.databaseReadMaxWait == .zero)
        // Pooled like the primary.
        #expect(urls.postgresReplicas.map(\.conninfo) == urls.databaseReadURLs)
        #expect(urls.postgresReplicas.allSatisfy { $0.poolSize == urls.databasePoolSize })
    }

    @Test func refusesWhatIsNotAListOfURIs() {
        for bad in ["host=replica dbname=parley", "replica:5432", "http://x", " , "] {
            #expect(throws: Configuration.Invalid.self, "\(bad)") {
                try configuration(["PARLEY_DATABASE_READ_URL": bad])
            }
        }
        #expect(throws: Configuration.Invalid.self) { try configuration(["PARLEY_DATABASE_READ_MAX_WAIT_MS": "-1"]) }
    }
}

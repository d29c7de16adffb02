import ParleyHTTP
import Testing

/// `HTTPQuery`, the one reader of query strings: decoding rules, edge cases, storage sharing, and a differential
/// check against a plain split-and-decode model.
struct HTTPQueryTests {
    @Test(arguments: [
        ("q=swift", "q", "swift"),
        ("a=1&q=x&b=2", "q", "x"),
        ("q=a%2Fb", "q", "a/b"), // percent-decoded
        ("q=a%2fb", "q", "a/b"), // either case of hex digit
        ("q=a+b", "q", "a b"), // `+` is a space
        ("q=a%2Bb", "q", "a+b"), // an escaped `+` is a plus
        ("q=%20", "q", " "),
        ("q=caf%C3%A9", "q", "café"), // UTF-8 sequences
        ("q=café", "q", "café"), // raw UTF-8 as sent
        ("q=a=b=c", "q", "a=b=c"), // the value runs to `&`, `=` included
        ("q=1&q=2", "q", "1"), // the first of a repeated name wins
        ("q=&q=2", "q", ""), // ... even when it is empty
        ("q", "q", ""), // no `=`: the empty value
        ("q&q=2", "q", ""),
        ("a=1&&q=x&", "q", "x"), // empty pairs skipped
        ("&&&q=x", "q", "x"),
        ("query=1&q=2", "q", "2"), // whole names only
        ("q1=1&q=2", "q", "2"),
        ("%71=x", "q", "x"), // names are matched after decoding
        ("a+b=1", "a b", "1"),
        ("a%20b=1", "a b", "1"),
        ("=x&q=y", "q", "y"), // an empty name is a name of its own
        ("=x", "", "x"),
        ("Q=1&q=2", "q", "2"), // names are case-sensitive
    ])
    func decodedValues(query: String, name: String, expected: String) throws {
        #expect(try HTTPQuery(query).value(for: name) == Substring(expected))
    }

    @Test(arguments: [
        ("q=a%2Fb+c", "q", "a%2Fb+c"), // as sent
        ("q=%zz", "q", "%zz"), // raw values are never refused
        ("q=1&q=2", "q", "1"),
        ("q", "q", ""),
        ("%71=x", "q", "x"),
    ])
    func rawValues(query: String, name: String, expected: String) {
        #expect(HTTPQuery(query).rawValue(for: name) == Substring(expected))
    }

    @Test(arguments: [nil, "", "a=1", "qq=1", "&", "=", "Q=1", "q%=1", "%=1"] as [String?])
    func absentNames(query: String?) throws {
        let parsed = HTTPQuery(query)
        #expect(try parsed.value(for: "q") == nil)
        #expect(parsed.rawValue(for: "q") == nil)
        #expect(!parsed.contains("q"))
    }

    @Test(arguments: ["q=%", "q=%4", "q=a%G1", "q=%1g", "q=%%", "q=%FF", "q=%C3", "q=%C3%28", "q=%ED%A0%80"])
    func malformedEscapesAreRefusedNamingTheParameter(query: String) throws {
        do {
            _ = try HTTPQuery(query).value(for: "q")
            Issue.record("accepted \(query)")
        } catch {
            #expect(error.code == 1002 && error.message.contains("`q`"), "\(error.message)")
        }
        // Only the parameter read is checked: a malformed neighbour does not fail another name.
        #expect(try HTTPQuery(query + "&ok=1").value(for: "ok") == "1")
    }

    @Test func integersAreDecimalDigitsInTheirRange() throws {
        let range: ClosedRange<Int64> = -5...100
        #expect(try HTTPQuery("n=42").integer(for: "n", in: range) == 42)
        #expect(try HTTPQuery("n=-5").integer(for: "n", in: range) == -5)
        #expect(try HTTPQuery("n=007").integer(for: "n", in: range) == 7)
        #expect(try HTTPQuery("n=%34%32").integer(for: "n", in: range) == 42) // decoded first
        #expect(try HTTPQuery("m=1").integer(for: "n", in: range) == nil)
        for bad in [
            "n=", "n", "n=+1", "n=%2B1", "n=1.0", "n=1e2", "n=%201", "n=1+", "n=-", "n=101", "n=-6", "n=x",
            "n=99999999999999999999",
        ] {
            #expect(throws: APIError.self, "\(bad)") { try HTTPQuery(bad).integer(for: "n", in: range) }
        }
        #expect(try HTTPQuery(nil).limit(defaultLimit: 20, max: 50) == 20)
        #expect(try HTTPQuery("limit=50").limit(defaultLimit: 20, max: 50) == 50)
        for bad in ["limit=0", "limit=51", "limit="] {
            #expect(throws: APIError.self, "\(bad)") { try HTTPQuery(bad).limit(defaultLimit: 20, max: 50) }
        }
    }

    @Test func positiveIDsMatchTheCursorPattern() throws {
        #expect(try HTTPQuery("cursor=1").positiveID(for: "cursor") == 1)
        #expect(try HTTPQuery("cursor=999999999999999999").positiveID(for: "cursor") == 999_999_999_999_999_999)
        #expect(try HTTPQuery("other=1").positiveID(for: "cursor") == nil)
        for bad in [
            "cursor=", "cursor=0", "cursor=01", "cursor=+1", "cursor=-1", "cursor=1x", "cursor=1000000000000000000",
        ] {
            do {
                _ = try HTTPQuery(bad).positiveID(for: "cursor")
                Issue.record("accepted \(bad)")
            } catch {
                #expect(error.code == 1002 && error.message.contains("`cursor`"), "\(bad)")
            }
        }
    }

    @Test func aNameThatDoesNotDecodeMatchesNothing() throws {
        #expect(try HTTPQuery("q%zz=1&q=2").value(for: "q") == "2")
        #expect(try HTTPQuery("q%zz=1").value(for: "q%zz") == nil)
    }

    @Test func containsSeesNamesWithAndWithoutValues() {
        let query = HTTPQuery("a&b=&c=1")
        #expect(query.contains("a") && query.contains("b") && query.contains("c") && !query.contains("d"))
    }

    /// A value without escapes is a slice of the query itself: reading it copies nothing.
    @Test func plainValuesShareTheQuerysStorage() throws {
        let text =
            "signature=" + String(repeating: "x", count: 40) + "&exp=1700000000&sig="
            + String(repeating: "A", count: 43)
        let query = HTTPQuery(text)
        func base(_ string: String) -> UnsafeRawPointer? {
            string.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil
        }
        let original = try #require(base(text))
        for name in ["exp", "sig", "signature"] {
            let value = try #require(try query.value(for: name))
            #expect(base(value.base) == original, "\(name)")
            let raw = try #require(query.rawValue(for: name))
            #expect(base(raw.base) == original, "\(name)")
        }
        // A decoded value is a copy of its own.
        let decoded = try #require(try HTTPQuery(text + "&d=a%20b").value(for: "d"))
        #expect(decoded == "a b" && base(decoded.base) != original)
    }

    @Test func requestsReadTheirQueryThroughIt() throws {
        let request = HTTPRequest(
            head: HTTPRequestHead(
                method: .GET, target: "/x?limit=5&c=a+b", path: "/x",
                query: "limit=5&c=a+b"))
        #expect(try request.query.value(for: "limit") == "5")
        #expect(try request.query.value(for: "c") == "a b")
        let bare = HTTPRequest(head: HTTPRequestHead(method: .GET, target: "/x", path: "/x"))
        #expect(try bare.query.value(for: "limit") == nil)
    }

    /// Random queries over a small alphabet of names, escapes and separators, against a plain model: split on
    /// `&`, skip empty pairs, split on the first `=`, decode both sides, the first decodable name wins.
    @Test func agreesWithASplitAndDecodeModel() throws {
        let pieces = [
            "a", "b", "ab", "=", "&", "%41", "%62", "+", "%2B", "%20", "%", "%G", "é", "%C3%A9", "1", "%3D", "%26",
        ]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }
        var checked = 0
        for _ in 0..<5_000 {
            var text = ""
            for _ in 0..<next(12) { text += pieces[next(pieces.count)] }
            let query = HTTPQuery(text)
            for name in ["a", "b", "ab", "A", "a b", "+", "=", "&", "é", ""] {
                let expected = Self.model(text, name)
                switch expected {
                case .absent:
                    #expect(try query.value(for: name) == nil, "\(text) \(name)")
                case .value(let value):
                    #expect(try query.value(for: name) == Substring(value), "\(text) \(name)")
                case .malformed:
                    #expect(throws: APIError.self, "\(text) \(name)") { try query.value(for: name) }
                }
                checked += 1
            }
        }
        #expect(checked == 50_000)
    }

    enum Expected: Equatable { case absent, value(String), malformed }

    static func model(_ query: String, _ name: String) -> Expected {
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard PercentDecoding.decode(parts[0], plusAsSpace: true) == name else { continue }
            guard parts.count > 1 else { return .value("") }
            return PercentDecoding.decode(parts[1], plusAsSpace: true).map { .value($0) } ?? .malformed
        }
        return .absent
    }
}

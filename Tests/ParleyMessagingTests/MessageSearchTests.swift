import Foundation
import ParleyLiveSupport
import ParleyPostgres
import Testing

@testable import ParleyMessaging

/// `GET /api/im/search` (issue 22): text and richText messages holding every word and CJK phrase of `q`, in the
/// conversations the caller reads, newest first; never revoked or cleared messages, nor other people's conversations.
@Suite("Message search")
struct MessageSearchTests {
    /// Searches once everything sent so far is indexed (the indexer runs off the send path).
    static func search(_ fx: MessagingFixture, _ by: Session, _ q: String, _ more: String = "") async throws
        -> TestResponse
    {
        try await fx.live.app.messaging.searchIndexer.drain()
        return try await fx.client.get(
            "/api/im/search?q=\(q.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)\(more)",
            token: by.accessToken)
    }

    /// The ids found, in the order answered; fails the test on anything but 200.
    static func found(_ fx: MessagingFixture, _ by: Session, _ q: String, _ more: String = "") async throws
        -> [String]
    {
        let response = try await search(fx, by, q, more)
        guard response.status == 200 else { throw TestFailure("search failed: \(response.status) \(response.text)") }
        return (response.data["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    static func id(_ message: [String: Any]) throws -> String {
        try #require(message["id"] as? String)
    }

    @Test func findsEnglishWordsChinesePhrasesAndJapanese() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let english = try Self.id(try await fx.sendOK(alice, to: bob.userId, content: "Let's meet for Coffee at 9"))
            let chinese = try Self.id(try await fx.sendOK(bob, to: alice.userId, content: "我们明天下午开会，记得带报告。"))
            let japanese = try Self.id(try await fx.sendOK(alice, to: bob.userId, content: "東京で会議があります"))
            let rich = try Self.id(
                try await fx.sendOK(
                    alice, to: bob.userId, msgType: "richText",
                    content: ["text": "Quarterly 预算 review", "spans": [["bold": [0, 9]]]]))
            // Kinds without written text are not searched, even when their JSON holds the word.
            _ = try await fx.sendOK(alice, to: bob.userId, msgType: "custom", content: ["note": "coffee"])

            #expect(try await Self.found(fx, bob, "coffee") == [english])
            #expect(try await Self.found(fx, bob, "  COFFEE meet ") == [english])
            #expect(try await Self.found(fx, alice, "明天下午") == [chinese])
            #expect(try await Self.found(fx, alice, "报告") == [chinese])
            // A single character is found wherever it stands, the last of a run too.
            #expect(try await Self.found(fx, alice, "告") == [chinese])
            #expect(try await Self.found(fx, bob, "会議") == [japanese])
            #expect(try await Self.found(fx, bob, "で会") == [japanese])
            #expect(try await Self.found(fx, bob, "预算") == [rich])
            #expect(try await Self.found(fx, bob, "quarterly") == [rich])
            // Every piece must occur: the pairs of 下午明天 are all in the text, the phrase is not.
            #expect(try await Self.found(fx, alice, "午开会明") == [])
            #expect(try await Self.found(fx, alice, "明天 报告") == [chinese])
            #expect(try await Self.found(fx, bob, "coffee tea") == [])
            // Whole words: a part of a word is not one.
            #expect(try await Self.found(fx, bob, "coff") == [])

            // History's shape.
            let response = try await Self.search(fx, bob, "coffee")
            let message = try #require((response.data["messages"] as? [[String: Any]])?.first)
            #expect(message["content"] as? String == "Let's meet for Coffee at 9")
            #expect(message["msgType"] as? String == "text" && message["fromId"] as? String == alice.userId)
            #expect(response.data["nextCursor"] is NSNull && response.data["hasMore"] as? Bool == false)
        }
    }

    /// ANALYZE in autovacuum and pg_restore evaluate the index's expression with an empty search_path: it must call
    /// nothing but built-ins (the first version called our own functions, and every automatic analyze failed).
    @Test func theIndexExpressionEvaluatesWithAnEmptySearchPath() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            _ = try await fx.sendOK(users[0], to: users[1].userId, content: "hello 世界")
            try await fx.database.withConnection { connection in
                _ = try await connection.query("SET search_path = ''")
                let analyzed: Result<PostgresRows, any Error>
                do {
                    // The expression as a fresh backend plans it (this one has the index's inlined in its cache).
                    _ = try await connection.query(
                        "SELECT public.parley_message_search_vector('sg:g', 'text', '\"hello 世界\"') AS vector")
                    analyzed = .success(try await connection.query("ANALYZE public.messages"))
                } catch {
                    analyzed = .failure(error)
                }
                _ = try await connection.query("RESET search_path")
                _ = try analyzed.get()
            }
        }
    }

    /// A revoke leaves the message's entry to the indexer's next batch; until then the search itself keeps it out.
    @Test func aRevokedMessageIsNotFoundBeforeTheIndexerRuns() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let secret = try Self.id(try await fx.sendOK(alice, to: bob.userId, content: "launch codes 发射密码"))
            #expect(try await Self.found(fx, bob, "launch") == [secret])
            let revoke = try await fx.client.post("/api/im/messages/\(secret)/revoke", token: alice.accessToken)
            #expect(revoke.status == 200)
            for q in ["launch", "发射"] {
                let response = try await fx.client.get(
                    "/api/im/search?q=\(q.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
                    token: bob.accessToken)
                #expect(response.status == 200)
                #expect((response.data["messages"] as? [[String: Any]])?.isEmpty == true)
            }
        }
    }

    @Test func neverFindsRevokedClearedOrOtherPeoplesMessages() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let revoked = try Self.id(try await fx.sendOK(alice, to: bob.userId, content: "secret plan 秘密计划"))
            let kept = try Self.id(try await fx.sendOK(alice, to: bob.userId, content: "public plan 公开计划"))
            let revoke = try await fx.client.post("/api/im/messages/\(revoked)/revoke", token: alice.accessToken)
            #expect(revoke.status == 200)
            #expect(try await Self.found(fx, bob, "secret") == [])
            #expect(try await Self.found(fx, bob, "秘密") == [])
            #expect(try await Self.found(fx, bob, "plan") == [kept])

            // An edit is searched as edited.
            let edited = try await fx.client.patch(
                "/api/im/messages/\(kept)", json: ["content": "public roadmap"], token: alice.accessToken)
            #expect(edited.status == 200)
            #expect(try await Self.found(fx, bob, "plan") == [])
            #expect(try await Self.found(fx, bob, "roadmap") == [kept])

            // Carol belongs to neither conversation; her own group is hers alone.
            #expect(try await Self.found(fx, carol, "roadmap") == [])
            let group = try await fx.createGroup(alice, members: [bob])
            let inGroup = try Self.id(
                try await fx.sendOK(alice, to: group.groupId, chatType: "group", content: "roadmap for the team"))
            #expect(try await Self.found(fx, carol, "roadmap") == [])
            #expect(try await Self.found(fx, bob, "roadmap") == [inGroup, kept])

            // Clearing history hides what came before, for the one who cleared only.
            let clear = try await fx.client.post(
                "/api/im/conversations/\(group.conversationId)/clear", token: bob.accessToken)
            #expect(clear.status == 200)
            #expect(try await Self.found(fx, bob, "roadmap") == [kept])
            #expect(try await Self.found(fx, alice, "roadmap") == [inGroup, kept])
            let later = try Self.id(
                try await fx.sendOK(alice, to: group.groupId, chatType: "group", content: "new roadmap"))
            #expect(try await Self.found(fx, bob, "roadmap") == [later, kept])

            // One conversation; someone else's answers as history does (1101), a malformed id is 1002.
            let single = MessagingFixture.singleID(alice, bob)
            #expect(try await Self.found(fx, bob, "roadmap", "&conversationId=\(single)") == [kept])
            let outsider = try await Self.search(fx, carol, "roadmap", "&conversationId=\(single)")
            #expect(outsider.status == 404 && outsider.code == 1101)
            let malformed = try await Self.search(fx, bob, "roadmap", "&conversationId=xx")
            #expect(malformed.status == 400 && malformed.code == 1002)
        }
    }

    @Test func pagesNewestFirstWithoutGapsOrRepeats() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            var sent: [String] = []
            for index in 0..<7 {
                sent.append(try Self.id(try await fx.sendOK(alice, to: bob.userId, content: "report \(index) 报告")))
            }
            _ = try await fx.sendOK(alice, to: bob.userId, content: "unrelated")
            var seen: [String] = []
            var cursor: String?
            for _ in 0..<10 {
                let more = "&limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")
                let response = try await Self.search(fx, bob, "报告 report", more)
                #expect(response.status == 200, "\(response.text)")
                let page = (response.data["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                #expect(page.count <= 3)
                seen += page
                cursor = response.data["nextCursor"] as? String
                #expect((cursor != nil) == (response.data["hasMore"] as? Bool == true))
                if cursor == nil { break }
            }
            #expect(seen == sent.reversed())
        }
    }

    @Test func refusesBadInput() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await fx.users(1)[0]
            func code(_ query: String) async throws -> (Int, Int?) {
                let response = try await fx.client.get("/api/im/search?\(query)", token: alice.accessToken)
                return (response.status, response.code)
            }
            #expect(try await code("") == (400, 1002))
            #expect(try await code("q=") == (400, 1002))
            #expect(try await code("q=%20%20") == (400, 1002))
            #expect(try await code("q=%21%3F") == (200, 0))
            #expect(try await code("q=a%00b") == (400, 1002))
            #expect(try await code("q=" + String(repeating: "a", count: 101)) == (400, 1002))
            #expect(try await code("q=" + String(repeating: "a", count: 100)) == (200, 0))
            #expect(try await code("q=a&limit=0") == (400, 1002))
            #expect(try await code("q=a&limit=101") == (400, 1002))
            #expect(try await code("q=a&cursor=nope") == (400, 1114))
            #expect(try await code("q=a&cursor=-1-2") == (400, 1114))
            #expect(try await code("q=a&cursor=1-2-3") == (400, 1114))
            #expect(try await code("q=a&conversationId=sg:") == (400, 1002))
            let anonymous = try await fx.client.get("/api/im/search?q=a")
            #expect(anonymous.status == 401)
        }
    }

    @Test func cursorsRoundTrip() {
        let cursor = MessageSearchCursor(createdAtMicroseconds: 1_764_000_000_123_456, id: 42)
        #expect(MessageSearchCursor(cursor.description) == cursor)
        #expect(MessageSearchCursor("+1-2") == nil)
        #expect(MessageSearchCursor("1-") == nil)
        #expect(MessageSearchCursor("99999999999999999999-1") == nil)
        #expect(
            MessageSearchCursor("999999999999999999-1")?.createdAtMicroseconds == MessageSearchCursor.maxMicroseconds)
    }
}

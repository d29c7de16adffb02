import ParleyJSON
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyMessaging

/// The indexer's terms (`MessageSearchTerms`) against the function they replace on the write path,
/// `parley_message_search_vector` (migrations/0031): searches ask with that function's query terms, so the two must
/// give the same lexemes for every text.
@Suite struct MessageSearchTermsTests {
    /// The terms as a list (nil: left to the database).
    static func lexemes(_ conversationId: String, _ text: String) -> [String]? {
        MessageSearchTerms.terms(conversationId: conversationId, text: text)?.split(separator: "\n").map(String.init)
    }

    static func lexemes(_ conversationId: String, type: String, _ content: String) -> [String]? {
        MessageSearchTerms.terms(conversationId: conversationId, msgType: type, content: content)?
            .split(separator: "\n").map(String.init)
    }

    @Test func wordsAreLowerCasedAndCJKRunsCutIntoPairs() {
        #expect(
            Self.lexemes("sg:team", "Hello, 世界和平! ÉTÉ x")
                == [
                    "sg:team hello", "sg:team 世界", "sg:team 界和", "sg:team 和平", "sg:team 平", "sg:team été",
                    "sg:team x",
                ])
        #expect(Self.lexemes("c", "你") == ["c 你"])
        #expect(Self.lexemes("c", " ,.!? ") == [])
        #expect(Self.lexemes("c", "") == [])
    }

    @Test func aLongWordIsCutTo64Characters() {
        let word = String(repeating: "ab", count: 40)
        #expect(Self.lexemes("c", word) == ["c " + word.prefix(64)])
    }

    /// ICU's context rule, which Swift's `lowercased()` lacks: a capital sigma ending a word is a final sigma.
    @Test func aCapitalSigmaEndingAWordBecomesAFinalSigma() {
        #expect(Self.lexemes("c", "ΟΔΟΣ ΣΑΣ") == ["c οδος", "c σας"])
        #expect(Self.lexemes("c", "Σ") == ["c σ"])
    }

    /// U+1680 is a word character to the function's classes and a space to its final split; such texts are left to
    /// it.
    @Test func aTextWithAnOghamSpaceMarkIsLeftToTheDatabase() {
        #expect(Self.lexemes("c", "a\u{1680}b") == nil)
        #expect(Self.lexemes("c", type: "text", "\"\u{1680}\"") == nil)
    }

    @Test func contentOfAShapeTheValidatorsRefuseIsLeftToTheDatabase() {
        #expect(Self.lexemes("c", type: "text", "\"Hi\"") == ["c hi"])
        #expect(Self.lexemes("c", type: "text", "12") == nil)
        #expect(Self.lexemes("c", type: "text", "not json") == nil)
        #expect(
            Self.lexemes("c", type: "richText", #"{"text":"Hi","spans":[]}"#)
                == ["c hi"])
        #expect(Self.lexemes("c", type: "richText", "{}") == [])
        #expect(Self.lexemes("c", type: "richText", #"{"text":1}"#) == nil)
        #expect(Self.lexemes("c", type: "image", #""k""#) == nil)
    }

    /// Every text of the corpus gets the same tsvector from both: hand-picked cases, then random texts drawn from the
    /// boundaries of the character classes the function names, characters whose lower case leaves or enters a class,
    /// case-ignorable marks around sigmas, the whitespace ICU sees in the word class, and runs long enough to be cut
    /// (the mixes that one character at a time does not reach).
    @Test func theTermsAreTheDatabaseFunctionsForEveryText() async throws {
        var corpus = [
            "Hello, 世界和平! ÉTÉ x", "ΟΔΟΣ ΣΑΣ.", "ΑΣ'Α", "AΣ1", "Σ", "ΣΣ", "Σ\u{301}", "Α\u{301}Σ\u{301}",
            "İSTANBUL", "ǅemal", "STRAẞE", "Ⴀ", "Ꭰ", "ﬀ", "ᾈ", "\u{1680}ab", "\u{1680},你", "\u{1680}", "a\u{1680}b",
            "\u{1680} \u{1680}x", String(repeating: "é", count: 70), String(repeating: "a", count: 63) + "\u{1680}bc",
            "Ｈｅｌｌｏ　ｗｏｒｌｄ", "ｶﾀｶﾅ", "한국어 텍스트", "日本語のテキスト", "𠀀𠀁𯿿", "😀 emoji 😀", "tab\tnew\nline",
            "x", "", "  ", "\u{3000}", "你", "你好", "a你b好c",
        ]
        var generator = SplitMix64(seed: 0x5EED_2026_1205)
        for _ in 0..<2000 { corpus.append(Self.randomText(&generator)) }

        let conversations = corpus.indices.map { $0 % 2 == 0 ? "sg:team" : "si:u1:u2" }
        let contents = corpus.map { JSONValue.string($0).serializedString }
        let terms = corpus.indices.map {
            MessageSearchTerms.terms(conversationId: conversations[$0], text: corpus[$0])
        }
        // Only texts with U+1680, or with a character the two may not treat alike, are left to the database.
        let left = corpus.indices.filter { terms[$0] == nil }
        #expect(
            left.allSatisfy {
                corpus[$0].unicodeScalars.contains("\u{1680}")
                    || !corpus[$0].unicodeScalars.allSatisfy(MessageSearchTerms.isShared)
            })
        #expect(left.count < corpus.count / 2)
        try await withMigratedClient { client in
            let rows = try await client.query(
                """
                SELECT i.n, parley_message_search_vector(i.conversation, 'text', i.content)::text AS expected,
                       array_to_tsvector(string_to_array(i.terms, E'\\n'))::text AS computed
                FROM unnest(\(PostgresTextArray(conversations))::text[], \(PostgresTextArray(contents))::text[],
                            \(PostgresTextArray(optionals: terms))::text[]) WITH ORDINALITY AS i(conversation, content, terms, n)
                WHERE i.terms IS NOT NULL
                  AND parley_message_search_vector(i.conversation, 'text', i.content)
                      IS DISTINCT FROM array_to_tsvector(string_to_array(i.terms, E'\\n'))
                """)
            for row in rows.prefix(5) {
                let index = try row.decode("n", as: Int.self) - 1
                Issue.record(
                    """
                    text \(corpus[index].unicodeScalars.map { String($0.value, radix: 16) }): \
                    database \(try row.decode("expected", as: String.self)), \
                    indexer \(try row.decode("computed", as: String.self))
                    """)
            }
            #expect(rows.isEmpty, "\(rows.count) of \(corpus.count) texts differ")
        }
    }

    /// Every character both sides know (`isShared`), inside a word and on each side of a capital sigma (what decides
    /// its lower case, how it is classed, and whether it is cased or case-ignorable), gets the same terms from both.
    @Test func everySharedCharacterGetsTheDatabaseFunctionsTerms() async throws {
        var texts: [String] = []
        for value in UInt32(0x80)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value), MessageSearchTerms.isShared(scalar) else { continue }
            let character = String(scalar)
            texts += ["a" + character + "b", "Α" + character + "Σ", "ΑΣ" + character]
        }
        #expect(texts.count > 300_000)
        try await withMigratedClient { client in
            var differing = 0
            for start in stride(from: 0, to: texts.count, by: 50_000) {
                let chunk = Array(texts[start..<min(start + 50_000, texts.count)])
                let contents = chunk.map { JSONValue.string($0).serializedString }
                let terms = chunk.map { MessageSearchTerms.terms(conversationId: "c", text: $0) }
                let rows = try await client.query(
                    """
                    SELECT i.n, parley_message_search_vector('c', 'text', i.content)::text AS expected,
                           array_to_tsvector(string_to_array(i.terms, E'\\n'))::text AS computed
                    FROM unnest(\(PostgresTextArray(contents))::text[], \(PostgresTextArray(optionals: terms))::text[])
                        WITH ORDINALITY AS i(content, terms, n)
                    WHERE i.terms IS NOT NULL
                      AND parley_message_search_vector('c', 'text', i.content)
                          IS DISTINCT FROM array_to_tsvector(string_to_array(i.terms, E'\\n'))
                    """)
                for row in rows.prefix(max(0, 5 - differing)) {
                    let text = chunk[try row.decode("n", as: Int.self) - 1]
                    Issue.record(
                        """
                        text \(text.unicodeScalars.map { String($0.value, radix: 16) }): \
                        database \(try row.decode("expected", as: String.self)), \
                        indexer \(try row.decode("computed", as: String.self))
                        """)
                }
                differing += rows.count
            }
            #expect(differing == 0, "\(differing) of \(texts.count) texts differ")
        }
    }

    /// Characters at and around every boundary the function and ICU's lower case draw.
    static let pool: [Unicode.Scalar] = {
        var values: [UInt32] = [
            0x20, 0x20, 0x20, 0x09, 0x0A, 0x21, 0x27, 0x2E, 0x2F, 0x30, 0x39, 0x3A, 0x40, 0x41, 0x5A, 0x5B, 0x60, 0x61,
            0x7A, 0x7B, 0xA0, 0xBF, 0xC0, 0xC9, 0xD7, 0xDF, 0xF7, 0x130, 0x131, 0x1C5, 0x24F, 0x250, 0x2BC, 0x300,
            0x301,
            0x345, 0x36F, 0x370, 0x386, 0x391, 0x3A3, 0x3A3, 0x3A3, 0x3C2, 0x3C3, 0x3A9, 0x401, 0x42F, 0x10A0, 0x10C7,
            0x13A0, 0x13F5, 0x1680, 0x1E9E, 0x1F88, 0x1FFF, 0x2000, 0x2019, 0x2126, 0x212A, 0x2160, 0x24B6, 0x2C00,
            0x3000, 0x303F, 0x3040, 0x3041, 0x30A2, 0x30FF, 0x3100, 0x31F0, 0x31FF, 0x3400, 0x4DBF, 0x4DC0, 0x4E00,
            0x4F60, 0x597D, 0x9FFF, 0xA000, 0xAB70, 0xAC00, 0xD55C, 0xD7AF, 0xD7B0, 0xF900, 0xFAFF, 0xFB00, 0xFF10,
            0xFF19, 0xFF1A, 0xFF21, 0xFF3A, 0xFF3B, 0xFF41, 0xFF5A, 0xFF5B, 0xFF65, 0xFF66, 0xFF9F, 0xFFA0, 0x10400,
            0x1F600, 0x20000, 0x2A6DF, 0x2FFFF, 0x30000,
        ]
        values += Array(0x61...0x7A) + Array(0x41...0x5A) + Array(0x4E00...0x4E0F) + Array(0x391...0x3A9)
        return values.compactMap(Unicode.Scalar.init)
    }()

    static func randomText(_ generator: inout SplitMix64) -> String {
        var text = String.UnicodeScalarView()
        let length = Int(generator.next() % 40)
        for _ in 0..<length {
            // Now and then a long run of one class, to reach the 64-character cut.
            if generator.next() % 40 == 0 {
                let letter = pool[Int(generator.next() % UInt64(pool.count))]
                text.append(contentsOf: repeatElement(letter, count: 60 + Int(generator.next() % 10)))
            } else {
                text.append(pool[Int(generator.next() % UInt64(pool.count))])
            }
        }
        return String(text)
    }
}

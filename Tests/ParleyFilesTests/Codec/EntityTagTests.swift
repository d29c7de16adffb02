import ParleyFiles
import Testing

@Suite("EntityTag")
struct EntityTagTests {
    static let cases: [(String?, String, Bool)] = [
        (nil, "\"abc\"", false),
        ("", "\"abc\"", false),
        ("\"abc\"", "\"abc\"", true),
        ("\"abc\"", "\"abd\"", false),
        ("\"ABC\"", "\"abc\"", false),
        ("*", "\"abc\"", true),
        (" * ", "\"abc\"", true),
        // Weak comparison: W/ is ignored on either side (RFC 9110 §8.8.3.2).
        ("W/\"abc\"", "\"abc\"", true),
        ("\"abc\"", "W/\"abc\"", true),
        ("W/\"abc\"", "W/\"abc\"", true),
        ("w/\"abc\"", "\"abc\"", false),
        // Lists.
        ("\"x\", \"abc\"", "\"abc\"", true),
        ("\"x\",\"y\" ,W/\"abc\"", "\"abc\"", true),
        ("\"x\", \"y\"", "\"abc\"", false),
        (" , \"abc\" ,, ", "\"abc\"", true),
        // A comma is an etagc: it does not split a tag.
        ("\"a,b\"", "\"a,b\"", true),
        ("\"a,b\"", "\"a\"", false),
        ("\"a\", \"b,abc\"", "\"abc\"", false),
        // Malformed elements are skipped, an unterminated tag ends the list.
        ("abc", "\"abc\"", false),
        ("abc, \"abc\"", "\"abc\"", true),
        ("W/abc, \"abc\"", "\"abc\"", true),
        ("\"x\"garbage, \"abc\"", "\"abc\"", true),
        ("\"abc", "\"abc\"", false),
        ("*, \"x\"", "\"abc\"", false),
        ("\"\"", "\"\"", true),
        ("\"\"", "\"abc\"", false),
        // The current tag may be given bare.
        ("\"abc\"", "abc", true),
        ("W/\"abc\"", "abc", true),
        ("\"abc\"", "abcd", false),
    ]

    @Test(arguments: cases)
    func comparesWeakly(_ header: String?, _ etag: String, _ expected: Bool) {
        #expect(EntityTag.ifNoneMatch(header, matches: etag) == expected)
    }

    @Test func quotesOpaqueValues() {
        let hash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        #expect(EntityTag.quoted(hash) == "\"\(hash)\"")
        #expect(EntityTag.quoted("") == "\"\"")
        #expect(EntityTag.quoted("a\"b c\r\nd\u{7F}é!#~") == "\"abcd!#~\"")
        #expect(EntityTag.ifNoneMatch(EntityTag.quoted(hash), matches: EntityTag.quoted(hash)))
        #expect(EntityTag.ifNoneMatch("W/" + EntityTag.quoted(hash), matches: hash))
    }
}

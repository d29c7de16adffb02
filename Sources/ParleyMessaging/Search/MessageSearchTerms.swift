import ParleyJSON

/// The index terms of a message, computed in the server instead of in PostgreSQL: the lexemes that
/// `parley_message_search_vector` (migrations/0031) gives, so that searches written against that function (its query
/// terms, its recheck) find what is indexed here. Where the two could differ (characters whose Unicode data differs
/// between Swift's tables and PostgreSQL's ICU, U+1680, content the validators refuse) the function decides.
/// Tokenizing in PostgreSQL took six regular expression passes per message on the one primary every instance shares;
/// here it is one pass over the scalars, on the instance that runs the indexer.
///
/// `MessageSearchTermsTests` compares the two on every character in the contexts that matter, and on random texts.
enum MessageSearchTerms {
    /// The lexemes of a `text` or `richText` message, one per line (what `string_to_array(terms, E'\\n')` splits):
    /// nil when the content is not the shape the validators accept (a JSON string; an object whose `text`, if
    /// present, is a string), or for the text below; the database's function indexes those.
    static func terms(conversationId: String, msgType: String, content: String) -> String? {
        guard let value = try? JSONValue.parse(content) else { return nil }
        switch msgType {
        case "text":
            return value.stringValue.flatMap { terms(conversationId: conversationId, text: $0) }
        case "richText":
            guard case .object(let object) = value else { return nil }
            guard let field = object["text"] else { return "" }
            return field.stringValue.flatMap { terms(conversationId: conversationId, text: $0) }
        default:
            return nil
        }
    }

    /// The lexemes of a searchable text, one per line, each term after the conversation's id and a space: every word
    /// (a run of the word class, cut to 64 characters) and every overlapping pair of each CJK run plus the run's last
    /// character. nil, leaving the text to the function, for a text holding a character the two may not treat alike
    /// (`isShared`), or U+1680 (OGHAM SPACE MARK): the function keeps that one as a word character but then splits at
    /// it, even before the first lexeme, as ICU calls it a space.
    static func terms(conversationId: String, text: String) -> String? {
        guard text.unicodeScalars.allSatisfy(isShared) else { return nil }
        let scalars = lowered(text)
        if scalars.contains("\u{1680}") { return nil }
        var utf8: [UInt8] = []
        utf8.reserveCapacity(scalars.count * 8 + 16)
        func append(_ range: Range<Int>) {
            if !utf8.isEmpty { utf8.append(UInt8(ascii: "\n")) }
            utf8.append(contentsOf: conversationId.utf8)
            utf8.append(UInt8(ascii: " "))
            for scalar in scalars[range] { UTF8.encode(scalar) { utf8.append($0) } }
        }
        var index = 0
        while index < scalars.count {
            let start = index
            switch kind(scalars[index]) {
            case .other:
                index += 1
            case .word:
                while index < scalars.count, kind(scalars[index]) == .word { index += 1 }
                append(start..<min(index, start + 64))
            case .cjk:
                while index < scalars.count, kind(scalars[index]) == .cjk { index += 1 }
                for pair in start..<(index - 1) { append(pair..<(pair + 2)) }
                append((index - 1)..<index)
            }
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    // MARK: - Unicode versions

    /// The Unicode version of the ICU that PostgreSQL lower-cases with: Debian 12's ICU 72, the oldest this server
    /// supports (a newer ICU agrees on every character assigned by then, save `changedSince`).
    static let databaseUnicode = (major: 15, minor: 0)

    /// Characters assigned by `databaseUnicode` whose case properties a later Unicode changed: Swift's tables are
    /// newer than ICU 72's, so the two would lower-case or classify them differently.
    static let changedSince: Set<UInt32> = [0x0295, 0x1171E]

    /// Whether Swift's tables and the database's ICU treat `scalar` alike: ASCII, or assigned by `databaseUnicode`
    /// and not changed since. A text with any other character is left to the database's function.
    static func isShared(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return true }
        guard let age = scalar.properties.age else { return false }
        let major = Int(age.major)
        let minor = Int(age.minor)
        guard major < databaseUnicode.major || (major == databaseUnicode.major && minor <= databaseUnicode.minor)
        else { return false }
        return !changedSince.contains(scalar.value)
    }

    // MARK: - Character classes

    enum Kind { case word, cjk, other }

    /// The function's two classes: letters and digits of spaced scripts (`word`), and Han, kana and Hangul (`cjk`);
    /// ranges of code points, as its bracket expressions are.
    static func kind(_ scalar: Unicode.Scalar) -> Kind {
        switch scalar.value {
        case 0x30...0x39, 0x61...0x7A, 0xC0...0x24F, 0x370...0x1FFF, 0xFF10...0xFF19, 0xFF21...0xFF3A, 0xFF41...0xFF5A:
            return .word
        case 0x3040...0x30FF, 0x31F0...0x31FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7AF, 0xF900...0xFAFF,
            0xFF66...0xFF9F, 0x20000...0x2FFFF:
            return .cjk
        default:
            return .other
        }
    }

    // MARK: - Lower case

    /// `lower(text COLLATE "und-x-icu")`: full Unicode lower-casing, with ICU's one context rule (a capital sigma
    /// that ends a word becomes a final sigma), which Swift's `lowercased()` does not apply.
    static func lowered(_ text: String) -> [Unicode.Scalar] {
        let scalars = Array(text.unicodeScalars)
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(scalars.count)
        for (index, scalar) in scalars.enumerated() {
            if scalar.isASCII {
                let value = scalar.value
                result.append((0x41...0x5A).contains(value) ? Unicode.Scalar(UInt8(value + 0x20)) : scalar)
            } else if scalar == "\u{3A3}" {
                result.append(endsWord(scalars, sigmaAt: index) ? "\u{3C2}" : "\u{3C3}")
            } else if kind(scalar) == .cjk || !scalar.properties.changesWhenLowercased {
                result.append(scalar)
            } else {
                result.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
            }
        }
        return result
    }

    /// Unicode's Final_Sigma condition: a cased letter before the sigma and none after it, skipping case-ignorable
    /// characters both ways.
    private static func endsWord(_ scalars: [Unicode.Scalar], sigmaAt index: Int) -> Bool {
        func isCased(_ scalar: Unicode.Scalar) -> Bool? {
            scalar.properties.isCaseIgnorable ? nil : scalar.properties.isCased
        }
        var before = false
        for scalar in scalars[..<index].reversed() {
            guard let cased = isCased(scalar) else { continue }
            before = cased
            break
        }
        guard before else { return false }
        for scalar in scalars[(index + 1)...] {
            guard let cased = isCased(scalar) else { continue }
            return !cased
        }
        return true
    }
}

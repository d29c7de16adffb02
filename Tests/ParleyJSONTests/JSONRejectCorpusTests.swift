import ParleyJSON
import Testing

/// One input the parser must reject, in the manner of JSONTestSuite's `n_` files, with the reason
/// and offset pinned so a case cannot pass by failing for some other cause.
struct RejectCase: Sendable, CustomTestStringConvertible {
    var name: String
    var input: [UInt8]
    var reason: String
    var offset: Int

    init(_ name: String, _ text: String, _ reason: String, at offset: Int) {
        self.init(name, Array(text.utf8), reason, at: offset)
    }

    init(_ name: String, _ input: [UInt8], _ reason: String, at offset: Int) {
        self.name = name
        self.input = input
        self.reason = reason
        self.offset = offset
    }

    var testDescription: String { name }
}

private let unexpected = "unexpected character"
private let end = "unexpected end of input"
private let badNumber = "invalid number"
private let afterArrayItem = "expected ',' or ']'"
private let afterMember = "expected ',' or '}'"
private let expectedKey = "expected string key"
private let expectedColon = "expected ':' after key"
private let trailing = "unexpected data after value"
private let badUTF8 = "invalid UTF-8"
private let unpaired = "unpaired surrogate"

/// `["` + bytes + `"]`: a string holding raw bytes that are not valid UTF-8.
private func stringWithBytes(_ raw: [UInt8]) -> [UInt8] { Array("[\"".utf8) + raw + Array("\"]".utf8) }

private func duplicateInLargeObject() -> [UInt8] {
    // 40 distinct keys, then key 7 again: exercises the hashed duplicate check past 16 members.
    let members = (0..<40).map { "\"k\($0)\":\($0)" } + ["\"k7\":0"]
    return Array(("{" + members.joined(separator: ",") + "}").utf8)
}

private func duplicateOffsetInLargeObject() -> Int {
    let members = (0..<40).map { "\"k\($0)\":\($0)" }
    return ("{" + members.joined(separator: ",") + ",").utf8.count
}

let rejectCorpus: [RejectCase] = [
    // Structure.
    .init("n_structure_empty", "", "empty input", at: 0),
    .init("n_structure_whitespace_only", " \t\r\n ", "empty input", at: 5),
    .init("n_structure_two_values", "1 2", trailing, at: 2),
    .init("n_structure_trailing_garbage", "{}x", trailing, at: 2),
    .init("n_structure_trailing_nul", [0x5B, 0x5D, 0x00], trailing, at: 2),
    .init("n_structure_line_comment", "[1] // comment", trailing, at: 4),
    .init("n_structure_block_comment", "/* c */ [1]", unexpected, at: 0),
    .init("n_structure_comment_inside_array", "[1 /* c */]", afterArrayItem, at: 3),
    .init("n_structure_utf8_BOM", [0xEF, 0xBB, 0xBF, 0x7B, 0x7D], unexpected, at: 0),
    .init("n_structure_form_feed_whitespace", "[\u{0C}]", unexpected, at: 1),
    .init("n_structure_vertical_tab_whitespace", "\u{0B}1", unexpected, at: 0),
    .init("n_structure_nbsp_whitespace", "[\u{A0}1]", unexpected, at: 1),
    .init("n_structure_lone_open_bracket", "[", end, at: 1),
    .init("n_structure_lone_open_brace", "{", end, at: 1),
    .init("n_structure_lone_close_bracket", "]", unexpected, at: 0),
    .init("n_structure_bracket_brace_mismatch", "[}", unexpected, at: 1),
    .init("n_structure_brace_bracket_mismatch", "{]", expectedKey, at: 1),
    .init("n_structure_unclosed_array_in_object", "{\"a\":[}", unexpected, at: 6),
    .init("n_structure_angle_brackets", "<.>", unexpected, at: 0),
    .init("n_structure_capitalized_True", "[True]", unexpected, at: 1),
    .init("n_structure_single_star", "*", unexpected, at: 0),
    .init("n_structure_lone_quote", "\"", "unterminated string", at: 0),
    .init(
        "n_structure_nesting_65", String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
        "nesting deeper than 64", at: 64),

    // Arrays.
    .init("n_array_1_true_without_comma", "[1 true]", afterArrayItem, at: 3),
    .init("n_array_comma_after_close", "[\"\"],", trailing, at: 4),
    .init("n_array_extra_comma", "[\"\",]", unexpected, at: 4),
    .init("n_array_double_comma", "[1,,2]", unexpected, at: 3),
    .init("n_array_leading_comma", "[,1]", unexpected, at: 1),
    .init("n_array_only_comma", "[,]", unexpected, at: 1),
    .init("n_array_unclosed", "[\"\"", end, at: 3),
    .init("n_array_unclosed_trailing_comma", "[1,", end, at: 3),
    .init("n_array_colon_instead_of_comma", "[\"\": 1]", afterArrayItem, at: 3),
    .init("n_array_star_inside", "[*]", unexpected, at: 1),
    .init("n_array_extra_close", "[1]]", trailing, at: 3),
    .init("n_array_incomplete_invalid_value", "[x", unexpected, at: 1),
    .init("n_incomplete_false", "[fals]", "invalid literal", at: 1),
    .init("n_incomplete_null", "[nul]", "invalid literal", at: 1),
    .init("n_incomplete_true", "[tru]", "invalid literal", at: 1),
    .init("n_incomplete_true_at_end", "t", "invalid literal", at: 0),
    .init("n_literal_uppercase_null", "NULL", unexpected, at: 0),

    // Numbers.
    .init("n_number_minus_alone", "-", badNumber, at: 1),
    .init("n_array_just_minus", "[-]", badNumber, at: 2),
    .init("n_number_leading_zero", "[012]", "leading zero in number", at: 1),
    .init("n_number_minus_leading_zero", "-01", "leading zero in number", at: 1),
    .init("n_number_plus", "[+1]", unexpected, at: 1),
    .init("n_number_dot_first", "[.123]", unexpected, at: 1),
    .init("n_number_trailing_dot", "[1.]", badNumber, at: 3),
    .init("n_number_dot_then_exponent", "[0.e1]", badNumber, at: 3),
    .init("n_number_real_without_fractional", "[2.e3]", badNumber, at: 3),
    .init("n_number_exponent_without_digits", "[1e]", badNumber, at: 3),
    .init("n_number_exponent_sign_without_digits", "[1e+]", badNumber, at: 4),
    .init("n_number_top_level_1e", "1e", badNumber, at: 2),
    .init("n_number_NaN", "[NaN]", unexpected, at: 1),
    .init("n_number_Infinity", "[Infinity]", unexpected, at: 1),
    .init("n_number_minus_Infinity", "[-Infinity]", badNumber, at: 2),
    .init("n_number_hex", "[0x1]", afterArrayItem, at: 2),
    .init("n_number_minus_space", "[- 1]", badNumber, at: 2),
    .init("n_number_neg_dot", "[-.123]", badNumber, at: 2),
    .init("n_number_with_alpha", "[1.2a-3]", afterArrayItem, at: 4),
    .init("n_number_fullwidth_digit", "[\u{FF11}]", unexpected, at: 1),
    .init("n_number_two_dots", "[1.2.3]", afterArrayItem, at: 4),

    // Objects.
    .init("n_object_trailing_comma", "{\"id\":0,}", expectedKey, at: 8),
    .init("n_object_unquoted_key", "{a:1}", expectedKey, at: 1),
    .init("n_object_single_quote_key", "{'a':0}", expectedKey, at: 1),
    .init("n_object_non_string_key", "{1:1}", expectedKey, at: 1),
    .init("n_object_missing_colon", "{\"a\" 1}", expectedColon, at: 5),
    .init("n_object_comma_instead_of_colon", "{\"x\", null}", expectedColon, at: 4),
    .init("n_object_double_colon", "{\"x\"::\"b\"}", unexpected, at: 5),
    .init("n_object_missing_value", "{\"a\":}", unexpected, at: 5),
    .init("n_object_key_without_value_at_end", "{\"a\"", end, at: 4),
    .init("n_object_unclosed", "{\"a\":1", end, at: 6),
    .init("n_object_no_comma", "{\"a\":1 \"b\":2}", afterMember, at: 7),
    .init("n_object_duplicate_key", "{\"a\":1,\"a\":2}", "duplicate key `a`", at: 7),
    .init("n_object_duplicate_key_nested", "{\"x\":{\"a\":1,\"b\":2,\"a\":3}}", "duplicate key `a`", at: 18),
    .init("n_object_duplicate_key_after_escape", "{\"a\":1,\"\\u0061\":2}", "duplicate key `a`", at: 7),
    .init(
        "n_object_duplicate_key_large", duplicateInLargeObject(), "duplicate key `k7`",
        at: duplicateOffsetInLargeObject()),

    // Strings.
    .init("n_string_single_quote", "['single quote']", unexpected, at: 1),
    .init("n_string_unterminated", "[\"abc", "unterminated string", at: 1),
    .init("n_string_backslash_at_end", "[\"\\", "unterminated string", at: 1),
    .init("n_string_unescaped_newline", "[\"a\nb\"]", "unescaped control character in string", at: 3),
    .init("n_string_unescaped_tab", "[\"a\tb\"]", "unescaped control character in string", at: 3),
    .init("n_string_unescaped_nul", [0x5B, 0x22, 0x00, 0x22, 0x5D], "unescaped control character in string", at: 2),
    .init(
        "n_string_unescaped_control_after_escape", "[\"\\n\u{1F}\"]", "unescaped control character in string",
        at: 4),
    .init("n_string_invalid_escape", "[\"\\x\"]", "invalid escape", at: 2),
    .init("n_string_escaped_apostrophe", "[\"\\'\"]", "invalid escape", at: 2),
    .init("n_string_escaped_uppercase_U", "[\"\\U0041\"]", "invalid escape", at: 2),
    .init("n_string_incomplete_unicode_escape", "[\"\\u00A\"]", "invalid \\u escape", at: 2),
    .init("n_string_unicode_escape_non_hex", "[\"\\uqqqq\"]", "invalid \\u escape", at: 2),
    .init("n_string_lone_high_surrogate", "[\"\\uD800\"]", unpaired, at: 2),
    .init("n_string_lone_low_surrogate", "[\"\\uDC00\"]", unpaired, at: 2),
    .init("n_string_high_surrogate_then_letter", "[\"\\uD800\\u0041\"]", unpaired, at: 2),
    .init("n_string_two_high_surrogates", "[\"\\uD800\\uD800\"]", unpaired, at: 2),
    .init("n_string_high_surrogate_then_text", "[\"\\uD834abcdef\"]", unpaired, at: 2),

    // UTF-8 (RFC 3629; Unicode Table 3-7).
    .init("n_string_overlong_slash", stringWithBytes([0xC0, 0xAF]), badUTF8, at: 2),
    .init("n_string_overlong_C1", stringWithBytes([0xC1, 0xBF]), badUTF8, at: 2),
    .init("n_string_overlong_3_bytes", stringWithBytes([0xE0, 0x80, 0xAF]), badUTF8, at: 2),
    .init("n_string_overlong_4_bytes", stringWithBytes([0xF0, 0x80, 0x80, 0xAF]), badUTF8, at: 2),
    .init("n_string_utf8_encoded_high_surrogate", stringWithBytes([0xED, 0xA0, 0x80]), badUTF8, at: 2),
    .init("n_string_utf8_encoded_low_surrogate", stringWithBytes([0xED, 0xBF, 0xBF]), badUTF8, at: 2),
    .init("n_string_above_U+10FFFF", stringWithBytes([0xF4, 0x90, 0x80, 0x80]), badUTF8, at: 2),
    .init("n_string_lead_F5", stringWithBytes([0xF5, 0x80, 0x80, 0x80]), badUTF8, at: 2),
    .init("n_string_byte_FF", stringWithBytes([0xFF]), badUTF8, at: 2),
    .init("n_string_lone_continuation", stringWithBytes([0x80]), badUTF8, at: 2),
    .init("n_string_truncated_sequence", stringWithBytes([0xE2, 0x82]), badUTF8, at: 2),
    .init("n_string_truncated_at_end_of_input", [0x22, 0xF0, 0x9F, 0x98], badUTF8, at: 1),
    .init(
        "n_string_invalid_utf8_after_escape", Array("[\"\\n".utf8) + [0xC0, 0x80] + Array("\"]".utf8), badUTF8,
        at: 4),
    .init("n_object_key_invalid_utf8", Array("{\"".utf8) + [0xFE] + Array("\":1}".utf8), badUTF8, at: 2),
]

@Suite("Rejecting invalid documents")
struct JSONRejectCorpusTests {
    @Test func corpusIsLargeEnough() {
        #expect(rejectCorpus.count >= 60)
        #expect(Set(rejectCorpus.map(\.name)).count == rejectCorpus.count)
    }

    @Test(arguments: rejectCorpus)
    func rejects(_ testCase: RejectCase) {
        let error = parseError(testCase.input)
        #expect(error == JSONParseError(offset: testCase.offset, reason: testCase.reason))
    }

    /// Every rejected input is also rejected through the `String` and buffer entry points when it is
    /// valid UTF-8 (a `String` cannot carry invalid UTF-8 unchanged).
    @Test(arguments: rejectCorpus)
    func rejectsThroughEveryEntryPoint(_ testCase: RejectCase) throws {
        let buffered = testCase.input.withUnsafeBufferPointer { buffer -> JSONParseError? in
            do throws(JSONParseError) {
                _ = try JSONValue.parse(buffer)
                return nil
            } catch {
                return error
            }
        }
        #expect(buffered?.reason == testCase.reason)
        guard let text = String(validating: testCase.input, as: UTF8.self) else { return }
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
    }
}

import ParleyJSON
import Testing

/// One input the parser must accept, in the manner of JSONTestSuite's `y_` files, with the value
/// it must produce.
struct AcceptCase: Sendable, CustomTestStringConvertible {
    var name: String
    var input: [UInt8]
    var expected: JSONValue

    init(_ name: String, _ text: String, _ expected: JSONValue) {
        self.init(name, Array(text.utf8), expected)
    }

    init(_ name: String, _ input: [UInt8], _ expected: JSONValue) {
        self.name = name
        self.input = input
        self.expected = expected
    }

    var testDescription: String { name }
}

/// JSONTestSuite's y_number_huge_exp: valid grammar, far outside any floating-point range.
private let hugeExponent = "0.4e00" + String(repeating: "6", count: 2) + String(repeating: "9", count: 500) + "6"

let acceptCorpus: [AcceptCase] = [
    // Structure and arrays.
    .init("y_array_empty", "[]", []),
    .init("y_array_empty_string", "[\"\"]", [""]),
    .init("y_array_arrays_with_spaces", "[[]   ]", [[]]),
    .init("y_array_false", "[false]", [false]),
    .init("y_array_heterogeneous", "[null, 1, \"1\", {}]", [nil, 1, "1", [:]]),
    .init("y_array_null", "[null]", [nil]),
    .init("y_array_with_leading_space", " [1]", [1]),
    .init("y_array_with_trailing_space", "[2] ", [2]),
    .init("y_array_with_several_null", "[1,null,null,null,2]", [1, nil, nil, nil, 2]),
    .init("y_array_with_1_and_newline", "[1\n]", [1]),
    .init("y_structure_lonely_false", "false", false),
    .init("y_structure_lonely_true", "true", true),
    .init("y_structure_lonely_null", "null", nil),
    .init("y_structure_lonely_int", "42", 42),
    .init("y_structure_lonely_negative_real", "-0.1", number("-0.1")),
    .init("y_structure_lonely_string", "\"asd\"", "asd"),
    .init("y_structure_whitespace_array", " [] ", []),
    .init("y_structure_trailing_newline", "[\"a\"]\n", ["a"]),
    .init("y_structure_true_in_array", "[true]", [true]),

    // Numbers.
    .init("y_number", "[123e65]", [number("123e65")]),
    .init("y_number_0e+1", "[0e+1]", [number("0e+1")]),
    .init("y_number_0e1", "[0e1]", [number("0e1")]),
    .init("y_number_after_space", "[ 4]", [4]),
    .init(
        "y_number_double_close_to_zero",
        "[-0.00000000000000000000000000000000000000000000000000000000000000000000000000001]",
        [number("-0.00000000000000000000000000000000000000000000000000000000000000000000000000001")]),
    .init("y_number_int_with_exp", "[20e1]", [number("20e1")]),
    .init("y_number_minus_zero", "[-0]", [number("-0")]),
    .init("y_number_negative_int", "[-123]", [-123]),
    .init("y_number_negative_one", "[-1]", [-1]),
    .init("y_number_real_capital_e", "[1E22]", [number("1E22")]),
    .init("y_number_real_capital_e_neg_exp", "[1E-2]", [number("1E-2")]),
    .init("y_number_real_capital_e_pos_exp", "[1E+2]", [number("1E+2")]),
    .init("y_number_real_fraction_exponent", "[123.456e78]", [number("123.456e78")]),
    .init("y_number_huge_exp", "[\(hugeExponent)]", [number(hugeExponent)]),
    .init("y_number_simple_int", "[123]", [123]),
    .init("y_number_simple_real", "[123.456789]", [number("123.456789")]),
    .init(
        "y_number_very_big_negative_int", "[-237462374673276894279832749832423479823246327846]",
        [number("-237462374673276894279832749832423479823246327846")]),

    // Objects.
    .init("y_object_basic", "{\"asd\":\"sdf\"}", ["asd": "sdf"]),
    .init("y_object_empty", "{}", [:]),
    .init("y_object_empty_key", "{\"\":0}", ["": 0]),
    .init("y_object_escaped_null_in_key", "{\"foo\\u0000bar\": 42}", ["foo\u{0}bar": 42]),
    .init("y_object_simple", "{\"a\":[]}", ["a": []]),
    .init("y_object_with_newlines", "{\n\"a\": \"b\"\n}", ["a": "b"]),
    .init(
        "y_object_extreme_numbers", "{ \"min\": -1.0e+28, \"max\": 1.0e+28 }",
        ["min": number("-1.0e+28"), "max": number("1.0e+28")]),
    .init("y_object_same_key_different_case", "{\"a\":1,\"A\":2}", ["a": 1, "A": 2]),

    // Strings.
    .init("y_string_1_2_3_bytes_UTF-8_sequences", "[\"\\u0060\\u012a\\u12AB\"]", ["\u{60}\u{12A}\u{12AB}"]),
    .init("y_string_accepted_surrogate_pair", "[\"\\uD801\\udc37\"]", ["\u{10437}"]),
    .init("y_string_accepted_surrogate_pairs", "[\"\\ud83d\\ude39\\ud83d\\udc8d\"]", ["\u{1F639}\u{1F48D}"]),
    .init("y_string_allowed_escapes", "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", ["\"\\/\u{8}\u{C}\n\r\t"]),
    .init("y_string_backslash_and_u_escaped_zero", "[\"\\\\u0000\"]", ["\\u0000"]),
    .init("y_string_escaped_control_character", "[\"\\u0012\"]", ["\u{12}"]),
    .init("y_string_escaped_noncharacter", "[\"\\uFFFF\"]", ["\u{FFFF}"]),
    .init("y_string_comments", "[\"a/*b*/c/*d//e\"]", ["a/*b*/c/*d//e"]),
    .init("y_string_in_array_with_leading_space", "[ \"asd\"]", ["asd"]),
    .init("y_string_nonCharacterInUTF-8_U+FFFF", [0x5B, 0x22, 0xEF, 0xBF, 0xBF, 0x22, 0x5D], ["\u{FFFF}"]),
    .init("y_string_unicode_U+10FFFE_nonchar", "[\"\\uDBFF\\uDFFE\"]", ["\u{10FFFE}"]),
    .init("y_string_utf8", "[\"\u{20AC}\u{1D11E}\"]", ["\u{20AC}\u{1D11E}"]),
    .init("y_string_u+2028_line_sep", "[\"\u{2028}\"]", ["\u{2028}"]),
    .init("y_string_with_del_character", "[\"a\u{7F}a\"]", ["a\u{7F}a"]),
    .init("y_string_unescaped_char_delete", "[\"\u{7F}\"]", ["\u{7F}"]),
    .init("y_string_null_escape", "[\"\\u0000\"]", ["\u{0}"]),
    .init("y_string_uEscape", "[\"\\u0061\\u30af\\u30EA\\u30b9\"]", ["a\u{30AF}\u{30EA}\u{30B9}"]),
    .init(
        "y_string_long_ascii_past_word_boundaries", "[\"abcdefghijklmnopqrstuvwxyz0123456789\"]",
        ["abcdefghijklmnopqrstuvwxyz0123456789"]),
    .init("y_string_escape_after_long_run", "[\"abcdefghijklmnop\\nqrstuvwxyz\"]", ["abcdefghijklmnop\nqrstuvwxyz"]),
    .init(
        "y_string_utf8_boundaries",
        [
            0x22, 0xC2, 0x80, 0xDF, 0xBF, 0xE0, 0xA0, 0x80, 0xED, 0x9F, 0xBF, 0xEE, 0x80, 0x80, 0xF0, 0x90, 0x80, 0x80,
            0xF4, 0x8F, 0xBF, 0xBF, 0x22,
        ],
        .string("\u{80}\u{7FF}\u{800}\u{D7FF}\u{E000}\u{10000}\u{10FFFF}")),
]

@Suite("Accepting valid documents")
struct JSONAcceptCorpusTests {
    @Test func corpusIsLargeEnough() {
        #expect(acceptCorpus.count >= 30)
        #expect(Set(acceptCorpus.map(\.name)).count == acceptCorpus.count)
    }

    @Test(arguments: acceptCorpus)
    func accepts(_ testCase: AcceptCase) throws {
        let value = try JSONValue.parse(testCase.input)
        #expect(value == testCase.expected)
    }

    @Test(arguments: acceptCorpus)
    func survivesARoundTrip(_ testCase: AcceptCase) throws {
        let value = try JSONValue.parse(testCase.input)
        let reparsed = try JSONValue.parse(value.serialized())
        #expect(reparsed == value)
        #expect(reparsed.serialized() == value.serialized())
    }
}

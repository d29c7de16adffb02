import Foundation
import ParleyHTTP
import ParleyJSON

/// Validation of ids and small fields, each failure answering 1002 with the field named.
enum MessagingInput {
    /// User and group ids: 1-64 of `[A-Za-z0-9_.@-]` (the users table's rule).
    static func isIdentifier(_ raw: some StringProtocol) -> Bool {
        isIdentifier(raw.utf8)
    }

    static func isIdentifier(_ bytes: some Collection<UInt8>) -> Bool {
        (1...64).contains(bytes.count)
            && bytes.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "@")
                    || byte == UInt8(ascii: "-")
            }
    }

    /// 1-19 ASCII digits and nothing else (no sign, no spaces): ids and cursor parts before they are converted.
    static func isDecimal(_ raw: some StringProtocol) -> Bool {
        (1...19).contains(raw.utf8.count) && raw.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    static func userID(_ raw: String, field: String) throws(APIError) -> String {
        guard isIdentifier(raw) else {
            throw APIError.validationFailed.with(message: "`\(field)` must be 1-64 of [A-Za-z0-9_.@-]")
        }
        return raw
    }

    static func groupID(_ raw: String, field: String = "id") throws(APIError) -> String {
        guard isIdentifier(raw) else { throw APIError.validationFailed.with(message: "`\(field)` is not a group id") }
        return raw
    }

    static func conversationID(_ raw: String) throws(APIError) -> (id: String, chatType: ChatType, parts: [String]) {
        guard let parsed = ConversationID.parse(raw) else {
            throw APIError.validationFailed.with(message: "`id` is not a conversation id (si:USER:USER or sg:GROUP)")
        }
        return (raw, parsed.chatType, parsed.parts)
    }

    static func messageID(_ raw: String) throws(APIError) -> Int64 {
        guard raw.utf8.count <= 19, raw.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let id = Int64(raw), id > 0
        else {
            throw APIError.validationFailed.with(message: "`id` is not a message id")
        }
        return id
    }

    /// Client message ids: 1-128 printable ASCII characters (UUIDs, ULIDs, counters...).
    static func clientMsgID(_ raw: String) throws(APIError) -> String {
        let bytes = raw.utf8
        guard (1...128).contains(bytes.count), bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw APIError.validationFailed.with(message: "`clientMsgId` must be 1-128 printable ASCII characters")
        }
        return raw
    }

    /// Names and short texts: at most `maxCharacters` code points as sent (JSON Schema's `maxLength`, what
    /// openapi.yaml states), no control characters, something besides white space; returned trimmed.
    static func name(_ raw: String, field: String, maxCharacters: Int = 64) throws(APIError) -> String {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, raw.unicodeScalars.count <= maxCharacters,
            !containsControl(raw, allowingLineBreaks: false)
        else {
            throw APIError.validationFailed.with(
                message: "`\(field)` must be 1-\(maxCharacters) characters without control characters")
        }
        return trimmed
    }

    /// Object keys: 1-512 printable ASCII characters (the server issues nothing else); whether the file exists and
    /// may be used is checked where it is referenced.
    static func isObjectKey(_ raw: String) -> Bool {
        !raw.isEmpty && raw.utf8.count <= 512 && raw.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// Free text (a note): at most `maxCharacters` code points, line breaks allowed, no other control characters,
    /// something besides white space; returned trimmed.
    static func text(_ raw: String, field: String, maxCharacters: Int) throws(APIError) -> String {
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, raw.unicodeScalars.count <= maxCharacters,
            !containsControl(raw, allowingLineBreaks: true)
        else {
            throw APIError.validationFailed.with(
                message: "`\(field)` must be 1-\(maxCharacters) characters without control characters")
        }
        return trimmed
    }

    static func objectKey(_ raw: String, field: String) throws(APIError) -> String {
        guard isObjectKey(raw) else {
            throw APIError.validationFailed.with(
                message: "`\(field)` must be an object key of 1-512 printable ASCII characters")
        }
        return raw
    }

    /// C0 controls and DEL; line breaks and tabs are allowed in message text.
    static func containsControl(_ text: String, allowingLineBreaks: Bool = false) -> Bool {
        text.unicodeScalars.contains { scalar in
            if allowingLineBreaks && (scalar == "\n" || scalar == "\t" || scalar == "\r") { return false }
            return scalar.value < 0x20 || scalar.value == 0x7F
        }
    }
}

extension MessagingInput {
    /// A reaction: an emoji (a sequence of several scalars: skin tones, joiners, flags) or an app's own short code
    /// (`:thumbsup:`): 1 to 16 Unicode scalars, no spaces (nor U+FEFF) or control characters, not `.` or `..` (which
    /// HTTP clients may resolve away in the path).
    static func reaction(_ raw: String) throws(APIError) -> String {
        let scalars = raw.unicodeScalars
        guard (1...16).contains(scalars.count), raw != ".", raw != "..",
            !scalars.contains(where: {
                $0.properties.generalCategory == .control || $0.properties.isWhitespace || $0.value == 0xFEFF
            })
        else {
            throw APIError.validationFailed.with(
                message: "a reaction must be 1 to 16 characters without spaces or control characters")
        }
        return raw
    }
}

/// The rules a subject must follow before it goes into a control line: a space or CRLF inside one would split
/// the line and let the rest be read as another operation.
public enum NATSSubject {
    /// A subject to publish to (or a reply subject): dot-separated tokens, none empty, no wildcards, no space or
    /// control character.
    public static func validatePublish(_ subject: String) throws(NATSError) {
        try validate(subject, wildcards: false)
    }

    /// A subject to subscribe to: as for publishing, except that a token may be `*` and the last token `>`.
    public static func validateSubscribe(_ subject: String) throws(NATSError) {
        try validate(subject, wildcards: true)
    }

    /// A queue group name: one or more bytes, no space or control character.
    public static func validateQueueGroup(_ queue: String) throws(NATSError) {
        if queue.isEmpty { throw .invalidQueueGroup("empty") }
        if queue.utf8.contains(where: isSeparatorOrControl) {
            throw .invalidQueueGroup("contains a space or control character")
        }
    }

    private static func validate(_ subject: String, wildcards: Bool) throws(NATSError) {
        let bytes = subject.utf8
        if bytes.isEmpty { throw .invalidSubject("empty") }
        var tokenLength = 0
        var tokenIsWildcard = false
        var sawFullWildcard = false
        for byte in bytes {
            if isSeparatorOrControl(byte) { throw .invalidSubject("contains a space or control character") }
            if sawFullWildcard { throw .invalidSubject("> must be the last token") }
            if byte == UInt8(ascii: ".") {
                if tokenLength == 0 { throw .invalidSubject("empty token") }
                tokenLength = 0
                tokenIsWildcard = false
                continue
            }
            tokenLength += 1
            if byte == UInt8(ascii: "*") || byte == UInt8(ascii: ">") {
                if !wildcards { throw .invalidSubject("wildcards are for subscriptions only") }
                if tokenLength != 1 { throw .invalidSubject("a wildcard must be a whole token") }
                tokenIsWildcard = true
                sawFullWildcard = byte == UInt8(ascii: ">")
            } else if tokenIsWildcard {
                throw .invalidSubject("a wildcard must be a whole token")
            }
        }
        if tokenLength == 0 { throw .invalidSubject("empty token") }
    }

    private static func isSeparatorOrControl(_ byte: UInt8) -> Bool { byte <= 0x20 || byte == 0x7F }
}

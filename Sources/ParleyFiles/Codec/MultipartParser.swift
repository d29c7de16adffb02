/// A streaming `multipart/form-data` parser (RFC 7578 over the RFC 2046 §5.1 framing) as a pure state machine:
/// the upload driver feeds whatever bytes arrived and gets back events. It exists so that a large file is
/// spooled as it arrives: part bodies are passed through, and the only bytes held back across feeds are a
/// possible partial delimiter (at most the delimiter's length) or one part's header section (bounded by
/// ``MultipartLimits/maxHeaderBytes``).
///
/// ```swift
/// var parser = MultipartParser(boundary: boundary)
/// for chunk in body { for event in try parser.feed(chunk) { ... } }
/// try parser.finish()
/// ```
///
/// A failure is sticky: after a throw, every later `feed` and `finish` throws the same error.
public struct MultipartParser: Sendable {
    enum State: Sendable, Equatable {
        /// Before the first delimiter; bytes are discarded (RFC 2046: the preamble is to be ignored).
        case preamble
        /// Right after `--boundary`: expecting `--`, transport padding or CRLF.
        case afterDelimiter
        /// After `--boundary-`: expecting the second `-` of the close delimiter.
        case closeDash
        /// In the transport padding (SP / HTAB) after a delimiter.
        case padding
        /// After the CR that ends a delimiter line.
        case delimiterLineFeed
        /// Reading a part's header section.
        case headers
        /// Reading a part's body.
        case body
        /// After the close delimiter; bytes are discarded (RFC 2046: the epilogue is to be ignored).
        case epilogue
        case failed(MultipartError)
    }

    public let limits: MultipartLimits
    /// `CRLF--boundary`: the CRLF before a boundary belongs to the delimiter, not to the part (RFC 2046 §5.1.1).
    private let delimiter: [UInt8]
    private(set) var state: State = .preamble
    /// How many bytes of `delimiter` the latest input ended with.
    private var matched = 2
    /// How many of the `matched` bytes were not input: the body starts as if after a CRLF, so it may open
    /// with `--boundary`; and a part's body starts as if after the CRLF that ended its header section, since
    /// that CRLF may also be the delimiter's when the part has no body at all (RFC 2046 §5.1.1:
    /// `body-part := MIME-part-headers [CRLF *OCTET]`). A failed match never releases these phantom bytes.
    private var phantom = 2
    private var headerBytes: [UInt8] = []
    private var partCount = 0

    /// - Parameter boundary: a boundary valid per ``isValidBoundary(_:)``, normally from
    ///   ``boundary(fromContentType:)``. An invalid one is a programming error.
    public init(boundary: String, limits: MultipartLimits = MultipartLimits()) {
        precondition(Self.isValidBoundary(boundary), "invalid multipart boundary")
        self.limits = limits
        self.delimiter = Array("\r\n--\(boundary)".utf8)
    }

    /// Bytes held back between feeds: a partial delimiter at the end of a part body, or an incomplete header
    /// section. Exposed so tests (and metrics) can check the streaming promise.
    public var bufferedByteCount: Int {
        state == .body ? matched - phantom : headerBytes.count
    }

    /// Whether the close delimiter has been read.
    public var isComplete: Bool { state == .epilogue }

    /// Feeds the next bytes of the body and returns the events they complete.
    public mutating func feed(_ bytes: some Collection<UInt8>) throws(MultipartError) -> [MultipartEvent] {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(MultipartError) in try consume(buffer) }
        }
        if let result { return try result.get() }
        return try Array(bytes).withUnsafeBufferPointer { buffer in
            Result { () throws(MultipartError) in try consume(buffer) }
        }.get()
    }

    /// Feeds the next bytes of the body straight from a read buffer, without copying them first.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(MultipartError) -> [MultipartEvent] {
        try consume(bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// Called when the body has ended: throws ``MultipartError/unexpectedEnd`` unless the close delimiter was
    /// read, so a truncated upload is never taken for a complete one.
    public mutating func finish() throws(MultipartError) {
        switch state {
        case .epilogue:
            return
        case .failed(let error):
            throw error
        default:
            state = .failed(.unexpectedEnd)
            throw .unexpectedEnd
        }
    }

    private mutating func consume(_ input: UnsafeBufferPointer<UInt8>) throws(MultipartError) -> [MultipartEvent] {
        if case .failed(let error) = state { throw error }
        var events: [MultipartEvent] = []
        var data: [UInt8] = []
        do throws(MultipartError) {
            var index = 0
            while index < input.count {
                switch state {
                case .preamble:
                    if scanForDelimiter(input, &index, keeping: false, into: &data) { state = .afterDelimiter }
                case .body:
                    if scanForDelimiter(input, &index, keeping: true, into: &data) {
                        if !data.isEmpty { events.append(.partData(data)) }
                        data = []
                        events.append(.partEnd)
                        state = .afterDelimiter
                    }
                case .afterDelimiter, .closeDash, .padding, .delimiterLineFeed:
                    let byte = input[index]
                    index += 1
                    try delimiterLineByte(byte)
                    if state == .epilogue { events.append(.end) }
                case .headers:
                    if let head = try readHeaders(input, &index) {
                        events.append(.partBegin(head))
                        state = .body
                        matched = 2
                        phantom = 2
                    }
                case .epilogue:
                    index = input.count
                case .failed(let error):
                    throw error
                }
            }
        } catch {
            state = .failed(error)
            throw error
        }
        if !data.isEmpty { events.append(.partData(data)) }
        return events
    }

    /// Advances through `input` looking for the delimiter; bytes proven not to be part of it go to `data`
    /// when `keeping` (part bodies) and are dropped otherwise (the preamble). Returns true with `index` just
    /// past the delimiter when it completes.
    ///
    /// On a mismatch the whole partial match is data: the delimiter starts with CR and a boundary holds no CR
    /// (RFC 2046 bchars), so no suffix of a partial match can begin a new one.
    private mutating func scanForDelimiter(
        _ input: UnsafeBufferPointer<UInt8>, _ index: inout Int, keeping: Bool, into data: inout [UInt8]
    ) -> Bool {
        var position = index
        defer { index = position }
        while position < input.count {
            if matched == 0 {
                let start = position
                while position < input.count, input[position] != UInt8(ascii: "\r") { position += 1 }
                if keeping, position > start {
                    data.append(contentsOf: UnsafeBufferPointer(rebasing: input[start..<position]))
                }
                if position == input.count { return false }
                matched = 1
                position += 1
            } else if input[position] == delimiter[matched] {
                matched += 1
                position += 1
                if matched == delimiter.count {
                    matched = 0
                    phantom = 0
                    return true
                }
            } else {
                if keeping { data.append(contentsOf: delimiter[phantom..<matched]) }
                matched = 0
                phantom = 0
            }
        }
        return false
    }

    /// The bytes between a delimiter and the next part's headers: `--` closes the body, otherwise optional
    /// transport padding then CRLF (RFC 2046 §5.1.1). Anything else means the boundary occurred inside a part,
    /// which RFC 2046 forbids, so the body is malformed.
    private mutating func delimiterLineByte(_ byte: UInt8) throws(MultipartError) {
        switch (state, byte) {
        case (.afterDelimiter, UInt8(ascii: "-")):
            state = .closeDash
        case (.closeDash, UInt8(ascii: "-")):
            state = .epilogue
        case (.closeDash, _):
            throw .malformed("malformed close delimiter")
        case (.afterDelimiter, UInt8(ascii: " ")), (.afterDelimiter, UInt8(ascii: "\t")),
            (.padding, UInt8(ascii: " ")), (.padding, UInt8(ascii: "\t")):
            state = .padding
        case (.afterDelimiter, UInt8(ascii: "\r")), (.padding, UInt8(ascii: "\r")):
            state = .delimiterLineFeed
        case (.delimiterLineFeed, UInt8(ascii: "\n")):
            partCount += 1
            guard partCount <= limits.maxParts else { throw .tooManyParts }
            state = .headers
        case (.delimiterLineFeed, _), (.afterDelimiter, UInt8(ascii: "\n")), (.padding, UInt8(ascii: "\n")):
            throw .malformed("missing CRLF after boundary")
        default:
            throw .malformed("unexpected bytes after boundary")
        }
    }

    /// Collects header bytes up to the empty line; returns the parsed head once it is complete.
    private mutating func readHeaders(
        _ input: UnsafeBufferPointer<UInt8>, _ index: inout Int
    ) throws(MultipartError) -> MultipartPartHead? {
        while index < input.count {
            let byte = input[index]
            index += 1
            guard headerBytes.count < limits.maxHeaderBytes else { throw .headerTooLarge }
            let previous = headerBytes.last
            // Lines end with CRLF (RFC 2046 §5.1.1); a lone CR or LF could hide a header from a proxy.
            if byte == UInt8(ascii: "\n"), previous != UInt8(ascii: "\r") {
                throw .malformed("bare LF in part header")
            }
            if previous == UInt8(ascii: "\r"), byte != UInt8(ascii: "\n") {
                throw .malformed("bare CR in part header")
            }
            headerBytes.append(byte)
            guard byte == UInt8(ascii: "\n") else { continue }
            let count = headerBytes.count
            let endsSection =
                count == 2
                || count >= 4 && headerBytes[count - 4] == UInt8(ascii: "\r")
                    && headerBytes[count - 3] == UInt8(ascii: "\n")
            if endsSection {
                let section = headerBytes
                headerBytes = []
                return try Self.parseHead(section)
            }
        }
        return nil
    }
}

import ParleyHTTP
import ParleyTestSupport
import Testing

/// What parsing an input produced: every event (consecutive `.body` runs merged) and the error, if any.
struct ParseOutcome: Equatable, CustomStringConvertible {
    var events: [HTTPParserEvent] = []
    var error: HTTPParseError?

    var heads: [HTTPRequestHead] {
        events.compactMap { if case .head(let head) = $0 { head } else { nil } }
    }

    var bodies: [[UInt8]] {
        events.compactMap { if case .body(let bytes) = $0 { bytes } else { nil } }
    }

    var endCount: Int { events.filter { $0 == .end }.count }

    var description: String {
        let names = events.map { event -> String in
            switch event {
            case .head(let head): "head(\(head.method) \(head.target))"
            case .body(let bytes): "body(\(bytes.count))"
            case .end: "end"
            }
        }
        return "\(names) error: \(error.map(String.init(describing:)) ?? "none")"
    }
}

/// Options shared by one parse: the parser's limits and the body limit the "driver" sets after each head.
struct ParseOptions {
    var limits = HTTPParserLimits()
    var bodyLimitAfterHead: Int?
    /// Inputs up to this size are also split in two at every byte boundary.
    var exhaustiveSplitLimit = 3 * 1024
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Feeds `input` cut at `cuts` (sorted offsets), draining `next()` after every append like a driver does.
func parse(_ input: [UInt8], cuts: [Int], options: ParseOptions = .init()) -> ParseOutcome {
    var parser = HTTPRequestParser(limits: options.limits)
    var outcome = ParseOutcome()
    var start = 0
    for cut in cuts + [input.count] where cut >= start {
        parser.append(contentsOf: input[start..<cut])
        start = cut
        do {
            while let event = try parser.next() {
                if case .head = event, let limit = options.bodyLimitAfterHead { parser.setBodyLimit(limit) }
                if case .body(let more) = event, case .body(let earlier)? = outcome.events.last {
                    #expect(!more.isEmpty, "body events are never empty")
                    outcome.events[outcome.events.count - 1] = .body(earlier + more)
                } else {
                    if case .body(let more) = event { #expect(!more.isEmpty, "body events are never empty") }
                    outcome.events.append(event)
                }
            }
        } catch {
            outcome.error = error
            // The failure is sticky: every later call throws the same error, whatever arrives.
            parser.append(contentsOf: bytes("GET / HTTP/1.1\r\nHost: a\r\n\r\n"))
            #expect(throws: error) { try parser.next() }
            return outcome
        }
    }
    return outcome
}

/// Parses `input` whole and under every other feeding (`DecoderVerifier`). Returns the outcome of feeding it whole.
@discardableResult
func parseUnderEverySplit(
    _ input: [UInt8], options: ParseOptions = .init(), sourceLocation: SourceLocation = #_sourceLocation
) -> ParseOutcome {
    DecoderVerifier.verify(input, exhaustiveLimit: options.exhaustiveSplitLimit, sourceLocation: sourceLocation) {
        parse(input, cuts: $0, options: options)
    }
}

func parseUnderEverySplit(
    _ text: String, options: ParseOptions = .init(), sourceLocation: SourceLocation = #_sourceLocation
) -> ParseOutcome {
    parseUnderEverySplit(bytes(text), options: options, sourceLocation: sourceLocation)
}

/// Parses a valid input under every split; requires that no error occurred.
func parseValid(
    _ text: String, options: ParseOptions = .init(), sourceLocation: SourceLocation = #_sourceLocation
) throws -> ParseOutcome {
    let outcome = parseUnderEverySplit(bytes(text), options: options, sourceLocation: sourceLocation)
    try #require(outcome.error == nil, "unexpected \(outcome)", sourceLocation: sourceLocation)
    return outcome
}

/// The status an input fails with under every split (nil if it parses).
func failureStatus(
    _ input: [UInt8], options: ParseOptions = .init(), sourceLocation: SourceLocation = #_sourceLocation
) -> Int? {
    parseUnderEverySplit(input, options: options, sourceLocation: sourceLocation).error?.status
}

func failureStatus(
    _ text: String, options: ParseOptions = .init(), sourceLocation: SourceLocation = #_sourceLocation
) -> Int? {
    failureStatus(bytes(text), options: options, sourceLocation: sourceLocation)
}

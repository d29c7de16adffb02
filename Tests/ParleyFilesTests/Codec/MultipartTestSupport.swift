import ParleyFiles
import ParleyTestSupport
import Testing

/// What parsing a body produced: every event (adjacent `.partData` merged), the error if any, and the most
/// bytes the parser held back after any feed.
struct MultipartOutcome: Equatable, CustomStringConvertible {
    var events: [MultipartEvent] = []
    var error: MultipartError?
    var maxBuffered = 0

    /// Same error, and the same events when there is none (a failing feed throws away the events it had
    /// gathered, so how many events precede an error depends on the split).
    static func == (lhs: MultipartOutcome, rhs: MultipartOutcome) -> Bool {
        lhs.error == rhs.error && (lhs.error != nil || lhs.events == rhs.events)
    }

    var heads: [MultipartPartHead] {
        events.compactMap { if case .partBegin(let head) = $0 { head } else { nil } }
    }

    /// Each part's body, in order.
    var bodies: [[UInt8]] {
        var result: [[UInt8]] = []
        for event in events {
            switch event {
            case .partBegin: result.append([])
            case .partData(let bytes): result[result.count - 1] += bytes
            default: break
            }
        }
        return result
    }

    var description: String {
        let names = events.map { event -> String in
            switch event {
            case .partBegin(let head): "begin(\(head.name))"
            case .partData(let bytes): "data(\(bytes.count))"
            case .partEnd: "partEnd"
            case .end: "end"
            }
        }
        return "\(names) error: \(error.map(String.init(describing:)) ?? "none")"
    }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Feeds `input` cut at `cuts` (sorted offsets), then calls `finish()`.
func parseMultipart(
    _ input: [UInt8], boundary: String, cuts: [Int], limits: MultipartLimits = .init()
) -> MultipartOutcome {
    var parser = MultipartParser(boundary: boundary, limits: limits)
    var outcome = MultipartOutcome()
    var start = 0
    do {
        for cut in cuts + [input.count] where cut >= start {
            for event in try parser.feed(input[start..<cut]) {
                if case .partData(let more) = event {
                    #expect(!more.isEmpty, "partData events are never empty")
                    if case .partData(let earlier)? = outcome.events.last {
                        outcome.events[outcome.events.count - 1] = .partData(earlier + more)
                        continue
                    }
                }
                outcome.events.append(event)
            }
            outcome.maxBuffered = max(outcome.maxBuffered, parser.bufferedByteCount)
            start = cut
        }
        try parser.finish()
    } catch {
        outcome.error = error
        // A failure is sticky, whatever arrives next.
        #expect(throws: error) { try parser.feed(bytes("--\(boundary)--\r\n")) }
        #expect(throws: error) { try parser.finish() }
    }
    return outcome
}

/// Parses `input` whole and under every other feeding (`DecoderVerifier`): other events or another error than the
/// whole input's are an issue. Returns the outcome of feeding it whole.
@discardableResult
func parseMultipartUnderEverySplit(
    _ input: [UInt8], boundary: String, limits: MultipartLimits = .init(),
    sourceLocation: SourceLocation = #_sourceLocation
) -> MultipartOutcome {
    DecoderVerifier.verify(input, randomTrials: 16, sourceLocation: sourceLocation) {
        parseMultipart(input, boundary: boundary, cuts: $0, limits: limits)
    }
}

/// Builds a body: `parts` are (header lines, body) pairs framed with `boundary`, then the close delimiter.
func multipartBody(
    boundary: String, parts: [(headers: [String], body: [UInt8])], preamble: String = "", epilogue: String = "\r\n"
) -> [UInt8] {
    var result = bytes(preamble.isEmpty ? "" : preamble + "\r\n")
    for part in parts {
        result += bytes("--\(boundary)\r\n")
        for line in part.headers { result += bytes(line + "\r\n") }
        result += bytes("\r\n") + part.body + bytes("\r\n")
    }
    result += bytes("--\(boundary)--" + epilogue)
    return result
}

/// A `Content-Disposition: form-data` line for a field (and optionally a file name).
func formData(_ name: String, filename: String? = nil) -> String {
    "Content-Disposition: form-data; name=\"\(name)\"" + (filename.map { "; filename=\"\($0)\"" } ?? "")
}

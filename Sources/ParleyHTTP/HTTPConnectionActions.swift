/// What `HTTPConnection` must do after each event of ``HTTPConnectionStateMachine``: one small enum per event, so
/// the driver's switches are exhaustive and nothing is allocated to return them.
extension HTTPConnectionStateMachine {
    /// After `bytesReceived`.
    enum ReadAction: Hashable {
        /// Append them to the HTTP parser and process its events.
        case parse
        /// Hand them to the upgrade handler.
        case deliverToUpgradeHandler
        /// Drop them: the connection takes no more input.
        case discard
    }

    /// After `headReceived`.
    enum HeadAction: Hashable {
        /// Keep the head and buffer the body; dispatch at its end. `sendContinue`: write `100 Continue` first.
        case readBody(sendContinue: Bool)
        /// Start the handler now with a body stream that the following body chunks feed.
        case dispatchWithBodyStream(sendContinue: Bool)
        /// No route takes the request and it has a body: dispatch it now with an empty body (the 404 or 405 is known
        /// from the head), leave the body unread, and close once the answer is out.
        case answerWithoutReadingBody
    }

    /// After `bodyReceived`.
    enum BodyAction: Hashable {
        /// Append the chunk to the request's buffered body.
        case buffer
        /// Push the chunk into the body stream; if it reports its consumer behind, send `bodyConsumerFellBehind`.
        case stream
        case discard
    }

    /// After `requestEnded`.
    enum EndAction: Hashable {
        /// Run the handler on the complete request (immediately when it has an immediate form, else in a task).
        case dispatch
        /// End the body stream the running handler reads.
        case finishBodyStream
        case none
    }

    /// After `parseFailed`.
    enum ParseFailureAction: Hashable {
        /// Write the error's answer with `Connection: close`, then close.
        case answerErrorThenClose
        /// Fail the body stream with the error; its handler answers, then the connection closes. Stop reading.
        case failBodyStreamThenCloseAfterResponse
    }

    /// After `bodyBudgetExhausted`.
    enum BudgetAction: Hashable {
        case none
        /// Write `503` (1015) with `Connection: close`, then close.
        case answerServiceUnavailableThenClose
    }

    /// After `bodyConsumerCaughtUp`.
    enum ResumeAction: Hashable {
        case none
        /// Input read while paused may now be parsed.
        case processBufferedInput
    }

    /// After `responseReady`.
    enum ResponseAction: Hashable {
        /// Write the answer (keep-alive) and go on with the next request.
        case write
        /// Write the answer with `Connection: close`, then close. `failBodyStream`: the handler answered before its
        /// streamed body ended, so the stream fails and the rest of the body is never read.
        case writeThenClose(failBodyStream: Bool)
        /// Write the 101, then hand the connection (and any bytes read after the request) to the upgrade handler.
        case writeThenUpgrade
        /// The connection closed meanwhile: drop the answer.
        case discard
    }

    /// After `outputDrained`.
    enum DrainedAction: Hashable {
        case none
        case close
        /// The last answer is out: shut down the sending side (the peer sees the end of the answer) and keep reading,
        /// discarding, until the peer closes or the lingering time is over; then close.
        case lingerThenClose
        /// A pipelined request waited for the answer to go out: parse it now (unless already parsing).
        case processBufferedInput
        /// The upgrade handler's writes were backpressured: tell it it may write again.
        case notifyUpgradeHandlerWritable
    }

    /// After `upgradeHandlerClosed`.
    enum CloseAction: Hashable {
        case close
        /// Stop reading; close once the queued output is written.
        case closeAfterOutput
    }

    /// After `peerHalfClosed`.
    enum HalfCloseAction: Hashable {
        case none
        case close
        /// Stop reading; close once the answer in flight, if any, and the queued output are written.
        /// `failBodyStream`: a streamed body can no longer end, so its stream fails.
        case closeAfterAnswer(failBodyStream: Bool)
    }

    /// Which deadline a request missed.
    enum RequestTimeout: Hashable {
        /// The head did not complete within the header timeout (a slowloris).
        case head
        /// The body stopped arriving for the idle timeout.
        case bodyIdle
        /// The body arrives below the minimum average rate after the grace period (a slow-body attack).
        case bodyTooSlow
    }

    /// After `sweep`.
    enum SweepAction: Hashable {
        case none
        case close
        /// Write `408 Request Timeout` with `Connection: close`, then close.
        case answerRequestTimeoutThenClose(RequestTimeout)
        /// Fail the body stream with a 408: its handler answers, then the connection closes. Stop reading.
        case failBodyStreamWithRequestTimeout(RequestTimeout)
    }

    /// After `shutdownRequested`.
    enum ShutdownAction: Hashable {
        case none
        case close
        /// Stop reading; close once the queued output is written.
        case closeAfterOutput
        /// Tell the upgrade handler (a WebSocket sends its close 1001).
        case notifyUpgradeHandler
    }
}

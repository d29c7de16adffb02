import Testing

@testable import ParleyPostgres

/// "May this interrupted operation be sent again on another connection?" as pure event sequences, without a server.
@Suite struct OperationProgressTests {
    private let errorResponse = UInt8(ascii: "E")
    private let bindComplete = UInt8(ascii: "2")

    /// A connection taken from the idle list after its reuse check, running a cached statement.
    private func reusedConnectionExecutingACachedStatement() -> OperationProgress {
        var progress = OperationProgress()
        progress.connectionCheckedForReuse()
        progress.operationStarted(at: .executing, firstResponseObservable: true)
        #expect(progress.awaitsFirstResponseByte)
        return progress
    }

    @Test func operationsThatNeverLeftTheClientAreSafeToRetry() {
        let progress = OperationProgress()
        #expect(progress.isSafeToRetry(after: .notSent))
        #expect(progress.isSafeToRetry(after: .sendFailed))
        // Whatever step the operation in flight had reached: a failed send means no Sync reached the server.
        var simple = OperationProgress()
        simple.operationStarted(at: .simple, firstResponseObservable: false)
        #expect(simple.isSafeToRetry(after: .sendFailed))
    }

    @Test func statementLostBeforeItsExecuteWasSentIsSafeToRetry() {
        var progress = OperationProgress()
        progress.operationStarted(at: .deallocating(thenPrepare: "s3"), firstResponseObservable: false)
        #expect(progress.isSafeToRetry(after: .connectionLost(serverErrorSQLState: nil)))
        progress.stepAdvanced(to: .preparing("s3"))
        #expect(progress.isSafeToRetry(after: .connectionLost(serverErrorSQLState: "08006")))
        progress.stepAdvanced(to: .executing)
        #expect(!progress.isSafeToRetry(after: .connectionLost(serverErrorSQLState: nil)))
    }

    @Test func backendThatLeftBeforeReadingTheStatementMakesItSafeToRetry() {
        var progress = reusedConnectionExecutingACachedStatement()
        progress.firstResponseByteArrived(errorResponse)
        #expect(!progress.awaitsFirstResponseByte)
        #expect(progress.isSafeToRetry(after: .connectionLost(serverErrorSQLState: "57P01")))
        #expect(progress.isSafeToRetry(after: .connectionLost(serverErrorSQLState: "57P02")))
    }

    @Test func statementKilledWhileRunningIsNotRetried() {
        // BindComplete came first: the backend read the statement, then died (maybe killed for this very statement).
        var running = reusedConnectionExecutingACachedStatement()
        running.firstResponseByteArrived(bindComplete)
        #expect(!running.isSafeToRetry(after: .connectionLost(serverErrorSQLState: "57P01")))

        // An error first, but not "the server is going away": the statement was refused, not unread.
        var refused = reusedConnectionExecutingACachedStatement()
        refused.firstResponseByteArrived(errorResponse)
        #expect(!refused.isSafeToRetry(after: .connectionLost(serverErrorSQLState: "40001")))
        #expect(!refused.isSafeToRetry(after: .connectionLost(serverErrorSQLState: nil)))

        // Nothing seen at all: no evidence either way.
        var silent = reusedConnectionExecutingACachedStatement()
        silent.firstResponseByteArrived(nil)
        #expect(!silent.isSafeToRetry(after: .connectionLost(serverErrorSQLState: "57P01")))
    }

    @Test func firstResponseIsWatchedOnlyForTheFirstStatementAfterAReuseCheck() {
        // Not reused (a fresh or busy connection): no byte is watched, so no evidence.
        var fresh = OperationProgress()
        fresh.operationStarted(at: .executing, firstResponseObservable: true)
        #expect(!fresh.awaitsFirstResponseByte)
        #expect(!fresh.isSafeToRetry(after: .connectionLost(serverErrorSQLState: "57P01")))

        // The check covers one statement; the next one on the same lease is not watched.
        var reused = reusedConnectionExecutingACachedStatement()
        reused.firstResponseByteArrived(bindComplete)
        reused.operationStarted(at: .executing, firstResponseObservable: true)
        #expect(!reused.awaitsFirstResponseByte)

        // TLS, or output still unflushed before it: the first byte on the socket would prove nothing.
        var unobservable = OperationProgress()
        unobservable.connectionCheckedForReuse()
        unobservable.operationStarted(at: .executing, firstResponseObservable: false)
        #expect(!unobservable.awaitsFirstResponseByte)
        // ...and the check is spent on that statement.
        unobservable.operationStarted(at: .executing, firstResponseObservable: true)
        #expect(!unobservable.awaitsFirstResponseByte)
    }

    @Test func previousStatementsFirstByteDoesNotCountForTheNext() {
        var progress = reusedConnectionExecutingACachedStatement()
        progress.firstResponseByteArrived(errorResponse)
        progress.operationStarted(at: .executing, firstResponseObservable: true)
        #expect(!progress.isSafeToRetry(after: .connectionLost(serverErrorSQLState: "57P01")))
    }

    @Test func simpleQueriesAreNeverRetriedOnceSent() {
        var progress = OperationProgress()
        progress.connectionCheckedForReuse()
        progress.operationStarted(at: .simple, firstResponseObservable: true)
        #expect(!progress.awaitsFirstResponseByte)
        #expect(!progress.isSafeToRetry(after: .connectionLost(serverErrorSQLState: "57P01")))
    }
}

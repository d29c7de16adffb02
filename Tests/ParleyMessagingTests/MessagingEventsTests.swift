import Foundation
@testable import ParleyMessaging
import Synchronization
import Testing

/// The event bus: observers run inline, in publish order, on the publisher's thread; streams still get every event.
struct MessagingEventsTests {
    private func read(_ seq: Int64) -> MessagingEvent {
        MessagingEvent(appId: 1, conversationId: "si:a:b", audience: .conversationMembers, originSessionId: nil,
                       payload: .read(conversationId: "si:a:b", userId: "a", seq: seq))
    }

    private func seq(of event: MessagingEvent) -> Int64 {
        if case .read(_, _, let seq) = event.payload { return seq }
        return -1
    }

    @Test func observersRunInlineInOrderBeforePublishReturns() async {
        let bus = MessagingEvents()
        let seen = Mutex<[(seq: Int64, thread: Bool)]>([])
        bus.observe { event in
            let seq = self.seq(of: event)
            seen.withLock { $0.append((seq, Thread.current.name == "publisher")) }
        }
        let stream = bus.subscribe()
        let thread = Thread {
            Thread.current.name = "publisher"
            for seq in 1...50 { bus.publish(read(Int64(seq))) }
        }
        thread.start()
        var streamed: [Int64] = []
        for await event in stream {
            streamed.append(seq(of: event))
            if streamed.count == 50 { break }
        }
        let observed = seen.withLock { $0 }
        #expect(observed.map(\.seq) == Array(1...50))
        #expect(observed.allSatisfy { $0.thread })
        #expect(streamed == Array(1...50))
    }
}

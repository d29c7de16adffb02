import Foundation
import Glibc
import Synchronization
import Testing

@testable import ParleyMessaging

/// The event bus: observers run inline, in publish order, on the publisher's thread; streams still get every event.
struct MessagingEventsTests {
    private func read(_ seq: Int64) -> MessagingEvent {
        MessagingEvent(
            appId: 1, conversationId: "si:a:b", audience: .conversationMembers, origin: nil,
            payload: .read(conversationId: "si:a:b", userId: "a", seq: seq))
    }

    private func seq(of event: MessagingEvent) -> Int64 {
        if case .read(_, _, let seq) = event.payload { return seq }
        return -1
    }

    @Test func observersRunInlineInOrderBeforePublishReturns() async {
        let bus = MessagingEvents()
        // The observer notes which thread ran it (pthread ids compare exactly; thread names are not reliable).
        let seen = Mutex<[(seq: Int64, thread: UInt)]>([])
        bus.observe { event in
            let seq = self.seq(of: event)
            seen.withLock { $0.append((seq, UInt(bitPattern: Int(bitPattern: pthread_self())))) }
        }
        let stream = bus.subscribe()
        let publisher = Mutex<UInt>(0)
        let thread = Thread {
            publisher.withLock { $0 = UInt(bitPattern: Int(bitPattern: pthread_self())) }
            for seq in 1...50 { bus.publish(read(Int64(seq))) }
        }
        thread.start()
        var streamed: [Int64] = []
        for await event in stream {
            streamed.append(seq(of: event))
            if streamed.count == 50 { break }
        }
        let observed = seen.withLock { $0 }
        let publisherThread = publisher.withLock { $0 }
        #expect(observed.map(\.seq) == Array(1...50))
        #expect(publisherThread != 0 && observed.allSatisfy { $0.thread == publisherThread })
        #expect(streamed == Array(1...50))
    }
}

import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyMessaging
import Testing

@testable import ParleyCalls

/// Every transition of a call, without a database: events in order, recipients, and the refusals.
struct CallMachineTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func invite(_ callees: [String], busy: Set<String> = [], timeout: Int = 30) throws -> CallMachine.Outcome {
        try CallMachine.invite(
            id: "call_x", appId: 1, callerId: "alice",
            callees: callees.map { .init(userId: $0, busy: busy.contains($0)) },
            mediaType: .audio, userData: "room-1", timeoutSeconds: timeout, now: t0)
    }

    func kinds(_ outcome: CallMachine.Outcome) -> [String] { outcome.events.map(\.kind.rawValue) }

    func states(_ call: Call) -> [String: ParticipantState] {
        Dictionary(uniqueKeysWithValues: call.participants.map { ($0.userId, $0.state) })
    }

    func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    func expectError(_ expected: APIError, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected \(expected.code)")
        } catch let error as APIError {
            #expect(error.code == expected.code)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func anInviteRingsEveryCalleeAndSetsTheDeadline() throws {
        let outcome = try invite(["bob", "carol"])
        #expect(outcome.call.state == .ringing)
        #expect(outcome.call.timeoutAt == at(30))
        #expect(states(outcome.call) == ["alice": .accepted, "bob": .ringing, "carol": .ringing])
        #expect(kinds(outcome) == ["call_invited"])
        #expect(outcome.events[0].recipients == ["bob", "carol"])
        let data = outcome.events[0].data
        #expect(data["callerId"]?.stringValue == "alice")
        #expect(data["userData"]?.stringValue == "room-1")
        #expect(data["timeoutSeconds"]?.int64Value == 30)
        #expect(data["participantIds"] == .array([.string("bob"), .string("carol")]))
    }

    @Test func aBusyCalleeAnswersBusyToTheCallerAndAllBusyEndsTheCall() throws {
        let partly = try invite(["bob", "carol"], busy: ["bob"])
        #expect(states(partly.call) == ["alice": .accepted, "bob": .busy, "carol": .ringing])
        #expect(kinds(partly) == ["call_invited", "call_rejected"])
        #expect(partly.events[0].recipients == ["carol"])
        #expect(partly.events[1].recipients == ["alice"])
        #expect(partly.events[1].data["reason"]?.stringValue == "busy")
        #expect(partly.call.state == .ringing)

        let all = try invite(["bob"], busy: ["bob"])
        #expect(kinds(all) == ["call_rejected", "call_ended"])
        #expect(all.call.state == .ended)
        #expect(all.call.endReason == .busy)
        #expect(all.call.timeoutAt == nil)
        #expect(states(all.call) == ["alice": .left, "bob": .busy])
    }

    @Test func theFirstAcceptStartsTheCallAndTellsTheOtherDevices() throws {
        let accepted = try CallMachine.accept(try invite(["bob"]).call, userId: "bob", sessionId: "s-bob-1", now: at(5))
        #expect(accepted.call.state == .active)
        #expect(accepted.call.startedAt == at(5))
        #expect(accepted.call.timeoutAt == nil)
        #expect(accepted.call.participant("bob")?.acceptedSessionId == "s-bob-1")
        #expect(kinds(accepted) == ["call_accepted", "call_answered_elsewhere"])
        #expect(accepted.events[0].recipients == ["alice"])
        #expect(accepted.events[1].recipients == ["bob"])
        // A second device of the same user is too late.
        expectError(.callAlreadyAnswered) {
            _ = try CallMachine.accept(accepted.call, userId: "bob", sessionId: "s-bob-2", now: at(6))
        }
        expectError(.callAlreadyAnswered) { _ = try CallMachine.reject(accepted.call, userId: "bob", now: at(6)) }
        // The caller cannot cancel an answered call; hanging up ends it with its duration.
        expectError(.callAlreadyAnswered) { _ = try CallMachine.cancel(accepted.call, userId: "alice", now: at(6)) }
        let ended = try CallMachine.hangup(accepted.call, userId: "alice", now: at(65))
        #expect(kinds(ended) == ["call_ended"])
        #expect(ended.call.endReason == .hangup)
        #expect(ended.call.endedBy == "alice")
        #expect(ended.call.durationSeconds == 60)
        #expect(ended.events[0].data["durationSeconds"]?.int64Value == 60)
        #expect(ended.events[0].recipients == ["alice", "bob"])
        #expect(states(ended.call) == ["alice": .left, "bob": .left])
        expectError(.callEnded) { _ = try CallMachine.hangup(ended.call, userId: "bob", now: at(66)) }
        expectError(.callEnded) { _ = try CallMachine.accept(ended.call, userId: "bob", sessionId: "s", now: at(66)) }
    }

    @Test func rejectsEndTheCallOnceNobodyIsLeftToAnswer() throws {
        let first = try CallMachine.reject(try invite(["bob", "carol"]).call, userId: "bob", now: at(2))
        #expect(kinds(first) == ["call_rejected"])
        #expect(first.events[0].recipients == ["alice", "bob", "carol"])
        #expect(first.call.state == .ringing)
        let second = try CallMachine.reject(first.call, userId: "carol", now: at(3))
        #expect(kinds(second) == ["call_rejected", "call_ended"])
        #expect(second.call.endReason == .rejected)
        #expect(second.call.endedBy == "carol")
        expectError(.callNotRinging) { _ = try CallMachine.reject(first.call, userId: "bob", now: at(3)) }
    }

    @Test func onlyTheCallerCancelsAndEveryRingingCalleeIsCancelled() throws {
        let call = try invite(["bob", "carol"]).call
        expectError(.callCancelNotAllowed) { _ = try CallMachine.cancel(call, userId: "bob", now: at(1)) }
        expectError(.callNotFound) { _ = try CallMachine.cancel(call, userId: "mallory", now: at(1)) }
        let cancelled = try CallMachine.cancel(call, userId: "alice", now: at(1))
        #expect(kinds(cancelled) == ["call_cancelled", "call_ended"])
        #expect(states(cancelled.call) == ["alice": .left, "bob": .cancelled, "carol": .cancelled])
        #expect(cancelled.call.endReason == .cancelled)
        #expect(cancelled.call.durationSeconds == 0)
    }

    @Test func hangupMeansRejectForACalleeAndCancelForTheCallerWhileRinging() throws {
        let call = try invite(["bob"]).call
        let byCallee = try CallMachine.hangup(call, userId: "bob", now: at(1))
        #expect(kinds(byCallee) == ["call_rejected", "call_ended"])
        let byCaller = try CallMachine.hangup(call, userId: "alice", now: at(1))
        #expect(kinds(byCaller) == ["call_cancelled", "call_ended"])
        expectError(.callNotFound) { _ = try CallMachine.hangup(call, userId: "mallory", now: at(1)) }
    }

    @Test func theTimeoutEndsTheUnansweredCalleesOnceAndTheCallWhenNobodyIsLeft() throws {
        let call = try invite(["bob", "carol", "dave"]).call
        #expect(CallMachine.expire(call, now: at(29.999)) == nil)
        let joined = try CallMachine.accept(call, userId: "bob", sessionId: "s", now: at(10))
        let rejected = try CallMachine.reject(joined.call, userId: "dave", now: at(11))
        let expired = try #require(CallMachine.expire(rejected.call, now: at(30)))
        #expect(kinds(expired) == ["call_timeout"])
        #expect(expired.events[0].data["userIds"] == .array([.string("carol")]))
        #expect(expired.call.state == .active)
        #expect(expired.call.timeoutAt == nil)
        #expect(CallMachine.expire(expired.call, now: at(31)) == nil)
        // Past the deadline an answer is refused even before the sweep ran.
        expectError(.callNotRinging) { _ = try CallMachine.accept(call, userId: "carol", sessionId: "s", now: at(30)) }

        let nobody = try #require(CallMachine.expire(try invite(["bob"]).call, now: at(40)))
        #expect(kinds(nobody) == ["call_timeout", "call_ended"])
        #expect(nobody.call.endReason == .timeout)
        #expect(nobody.call.endedBy == nil)
        #expect(nobody.events[1].data["userId"] == .null)
    }

    @Test func aMultiPartyCallGoesOnUntilFewerThanTwoAreLeft() throws {
        var call = try invite(["bob", "carol"]).call
        let bob = try CallMachine.accept(call, userId: "bob", sessionId: "sb", now: at(1))
        #expect(kinds(bob) == ["call_accepted", "call_answered_elsewhere"])
        let carol = try CallMachine.accept(bob.call, userId: "carol", sessionId: "sc", now: at(2))
        #expect(kinds(carol) == ["call_participant_joined", "call_answered_elsewhere"])
        #expect(carol.events[0].recipients == ["alice", "bob"])
        call = carol.call
        let callerLeaves = try CallMachine.hangup(call, userId: "alice", now: at(10))
        #expect(kinds(callerLeaves) == ["call_participant_left"])
        #expect(callerLeaves.call.state == .active)
        let bobLeaves = try CallMachine.hangup(callerLeaves.call, userId: "bob", now: at(20))
        #expect(kinds(bobLeaves) == ["call_ended"])
        #expect(states(bobLeaves.call) == ["alice": .left, "bob": .left, "carol": .left])
        expectError(.callEnded) { _ = try CallMachine.hangup(bobLeaves.call, userId: "carol", now: at(21)) }
    }

    @Test func recordsGiveEachCalleeTheirOwnOutcome() throws {
        let call = try invite(["bob", "carol", "dave", "erin"], busy: ["erin"]).call
        let bob = try CallMachine.accept(call, userId: "bob", sessionId: "s", now: at(4))
        let carol = try CallMachine.reject(bob.call, userId: "carol", now: at(5))
        let expired = try #require(CallMachine.expire(carol.call, now: at(30)))
        let ended = try CallMachine.hangup(expired.call, userId: "bob", now: at(94))
        let records = CallService.records(of: ended.call)
        #expect(records.map(\.calleeId) == ["bob", "carol", "dave", "erin"])
        #expect(records.map { $0.content["status"]?.stringValue } == ["completed", "rejected", "missed", "busy"])
        #expect(records.map { $0.content["durationSec"]?.int64Value } == [90, 0, 0, 0])
        #expect(records.allSatisfy { $0.msgType == .callAudio && $0.callerId == "alice" })
        #expect(Set(records.map(\.clientMsgId)).count == 4)
    }

    func refusedInvite(_ callees: [(String, CallMachine.DirectRefusal?)]) throws -> CallMachine.Outcome {
        try CallMachine.invite(
            id: "call_x", appId: 1, callerId: "alice",
            callees: callees.map { .init(userId: $0.0, busy: false, refusal: $0.1) }, mediaType: .video,
            userData: "", timeoutSeconds: 30, now: t0)
    }

    @Test func aOneToOneInviteTheDirectVerdictRefusesIsRefusedWithTheSendsCode() throws {
        expectError(.peerRefused) { _ = try refusedInvite([("bob", .blocked)]) }
        expectError(.friendsOnly) { _ = try refusedInvite([("bob", .notFriends)]) }
        #expect(APIError.peerRefused.code == 1119 && APIError.friendsOnly.code == 1120)
    }

    @Test func aRefusedCalleeOfAMultiPartyCallAnswersBusyAndTheOthersRing() throws {
        let partly = try refusedInvite([("bob", .blocked), ("carol", nil), ("dave", .notFriends)])
        #expect(states(partly.call) == ["alice": .accepted, "bob": .busy, "carol": .ringing, "dave": .busy])
        #expect(kinds(partly) == ["call_invited", "call_rejected", "call_rejected"])
        #expect(partly.events[0].recipients == ["carol"])
        #expect(partly.events[1].recipients == ["alice"])
        #expect(partly.events[1].data["reason"]?.stringValue == "busy")
        let none = try refusedInvite([("bob", .blocked), ("dave", .notFriends)])
        #expect(none.call.state == .ended)
        #expect(none.call.endReason == .busy)
        #expect(kinds(none) == ["call_rejected", "call_rejected", "call_ended"])
    }

    @Test func aUserIsInOneCallAtATime() throws {
        expectError(.alreadyInCall) {
            _ = try CallMachine.invite(
                id: "call_x", appId: 1, callerId: "alice", callerBusy: true,
                callees: [.init(userId: "bob", busy: false)],
                mediaType: .audio, userData: "", timeoutSeconds: 30, now: t0)
        }
        let call = try invite(["bob"]).call
        expectError(.alreadyInCall) {
            _ = try CallMachine.accept(call, userId: "bob", sessionId: "s", inAnotherCall: true, now: at(1))
        }
        // An answered call stays "already answered" (1703), whatever else the user is in.
        let accepted = try CallMachine.accept(call, userId: "bob", sessionId: "s", now: at(1))
        expectError(.callAlreadyAnswered) {
            _ = try CallMachine.accept(accepted.call, userId: "bob", sessionId: "t", inAnotherCall: true, now: at(2))
        }
    }

    @Test func turnCredentialsFollowCoturnsRESTFormat() throws {
        // The expected credential: `printf '1800086400:bob' | openssl dgst -sha1 -hmac s3cret -binary | base64`.
        let issued = TurnCredentials.issue(
            secret: "s3cret", userId: "bob", ttlSeconds: 86_400, uris: ["turn:turn.example:3478"], now: t0)
        #expect(issued.username == "1800086400:bob")
        #expect(issued.credential == "tVIE8vEl7IDJhzbbJXE3IebNx78=")
        #expect(issued.password == issued.credential)
        #expect(issued.ttl == 86_400)
        #expect(issued.uris == ["turn:turn.example:3478"])
    }
}

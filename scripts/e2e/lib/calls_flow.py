"""Issue 21's call signalling end to end, at the wire level, on two `parley serve` instances of one database
(scripts/e2e/93-calls.sh): Alice's phone on the first, Bob's phone on the second and his tablet on the first.

1. A 1:1 audio call: `call_invite` on the first instance rings both of Bob's devices (`call_invited`, once each);
   his phone accepts on the second (Alice hears `call_accepted` through the relay, the tablet
   `call_answered_elsewhere`, the phone nothing: it has its ack); Alice hangs up; both devices get `call_ended`
   with the duration, and the conversation has one `callAudio` record, `completed`.
2. A call nobody answers: it times out once across the two instances (`call_timeout`, `call_ended`, each once per
   device) and leaves one `missed` record.
3. A 3-party video call where one callee times out: Bob answers, Carol never does; the timeout ends only Carol's
   invitation (`call_timeout` naming her, once), the call goes on until Bob hangs up, and the records say
   `completed` for Bob and `missed` for Carol.
Settings: see scripts/e2e/lib/seeds/client.py (SEEDS_BASE, SEEDS_OTHER_BASE, SEEDS_APP_KEY).
"""
import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds"))
from client import APP_KEY, BASE, OTHER_BASE, Device, check, http, password_login, register  # noqa: E402

SETTLE_SECONDS = 0.5


def session(answer, what):
    check(answer.status == 200 and isinstance(answer.body, dict), f"{what}: {answer}")
    return answer.body["data"]


def records(token, conversation_id):
    answer = http("GET", f"/api/im/conversations/{conversation_id}/messages", token=token, base=OTHER_BASE)
    check(answer.status == 200, f"history: {answer}")
    messages = [m for m in answer.body["data"]["messages"] if m["msgType"] in ("callAudio", "callVideo")]
    return [json.loads(m["content"]) for m in sorted(messages, key=lambda m: m["seq"])]


def count(device, kind, call_id):
    return sum(1 for f in device.received if f.get("type") == kind and f.get("data", {}).get("callId") == call_id)


async def main():
    alice = session(register("alice"), "alice registers")
    bob = session(register("bob"), "bob registers")
    bob_tablet = session(password_login("bob", platform="android"), "bob logs in on a tablet")
    alice_id, bob_id = alice["user"]["id"], bob["user"]["id"]
    conversation = "si:" + ":".join(sorted([alice_id, bob_id], key=str.encode))

    alice_phone = await Device("alice-phone", alice["imToken"], base=BASE).connect()
    bob_phone = await Device("bob-phone", bob["imToken"], base=OTHER_BASE).connect()
    tablet = await Device("bob-tablet", bob_tablet["imToken"], base=BASE).connect()

    # 1. Ring, answer on one device, hang up.
    call = await alice_phone.request("call_invite", {"participantIds": [bob_id], "mediaType": "audio",
                                                     "userData": "room-7"})
    call_id = call["callId"]
    check(call["state"] == "ringing", f"invite ack: {call}")
    for device in (bob_phone, tablet):
        invited = await device.event("call_invited", callId=call_id)
        check(invited["callerId"] == alice_id and invited["userData"] == "room-7"
              and invited["timeoutSeconds"] == 30, f"{device.name} call_invited: {invited}")
    accepted = await bob_phone.request("call_accept", {"callId": call_id})
    check(accepted["state"] == "active", f"accept ack: {accepted}")
    check((await alice_phone.event("call_accepted", callId=call_id))["userId"] == bob_id, "call_accepted names bob")
    await tablet.event("call_answered_elsewhere", callId=call_id)
    await asyncio.sleep(1.1)
    ended_ack = await alice_phone.request("call_hangup", {"callId": call_id})
    check(ended_ack["state"] == "ended" and ended_ack["durationSeconds"] >= 1, f"hangup ack: {ended_ack}")
    for device in (bob_phone, tablet):
        ended = await device.event("call_ended", callId=call_id)
        check(ended["reason"] == "hangup" and ended["userId"] == alice_id and ended["durationSeconds"] >= 1,
              f"{device.name} call_ended: {ended}")
    for device in (alice_phone, bob_phone, tablet):
        await device.settle(SETTLE_SECONDS)
    check(count(bob_phone, "call_answered_elsewhere", call_id) == 0, "the answering phone is not told it answered")
    for device in (bob_phone, tablet):
        check(count(device, "call_invited", call_id) == 1 and count(device, "call_ended", call_id) == 1,
              f"{device.name} got each call event once: {device.received}")
    completed = records(bob["accessToken"], conversation)
    check([(r["callId"], r["status"], r["mediaType"]) for r in completed] == [(call_id, "completed", "audio")]
          and completed[0]["durationSec"] >= 1, f"one completed record: {completed}")

    # 2. Nobody answers: one timeout, whichever instance's sweep takes it.
    missed = await alice_phone.request("call_invite", {"participantIds": [bob_id], "mediaType": "video",
                                                       "timeoutSeconds": 1})
    missed_id = missed["callId"]
    for device in (bob_phone, tablet):
        await device.event("call_invited", callId=missed_id)
        await device.event("call_timeout", callId=missed_id)
        check((await device.event("call_ended", callId=missed_id))["reason"] == "timeout", "ended by the timeout")
    for device in (alice_phone, bob_phone, tablet):
        await device.settle(SETTLE_SECONDS)
    for device in (alice_phone, bob_phone, tablet):
        check(count(device, "call_timeout", missed_id) == 1, f"{device.name}: one call_timeout")
    statuses = [r["status"] for r in records(bob["accessToken"], conversation)]
    check(statuses == ["completed", "missed"], f"records after the timeout: {statuses}")

    # 3. Three parties, video: Bob answers, Carol (on the other instance) lets it ring out.
    carol = session(register("carol"), "carol registers")
    carol_id = carol["user"]["id"]
    carol_phone = await Device("carol-phone", carol["imToken"], base=OTHER_BASE).connect()
    group = await alice_phone.request("call_invite", {"participantIds": [bob_id, carol_id], "mediaType": "video",
                                                      "timeoutSeconds": 2})
    group_id = group["callId"]
    invited = await carol_phone.event("call_invited", callId=group_id)
    check(sorted(invited["participantIds"]) == sorted([bob_id, carol_id]) and invited["mediaType"] == "video",
          f"carol's call_invited: {invited}")
    await bob_phone.event("call_invited", callId=group_id)
    check((await bob_phone.request("call_accept", {"callId": group_id}))["state"] == "active", "bob joins")
    timed_out = await alice_phone.event("call_timeout", callId=group_id)
    check(timed_out["userIds"] == [carol_id], f"only carol timed out: {timed_out}")
    await carol_phone.event("call_timeout", callId=group_id)
    state = http("GET", f"/api/calls/{group_id}", token=alice["accessToken"], base=BASE)
    check(state.status == 200 and state.body["data"]["state"] == "active", f"the call goes on: {state}")
    late = http("POST", f"/api/calls/{group_id}/accept", token=carol["accessToken"], base=OTHER_BASE)
    check(late.status == 409 and late.body["code"] == 1702, f"a late accept: {late}")
    await bob_phone.request("call_hangup", {"callId": group_id})
    check((await alice_phone.event("call_ended", callId=group_id))["userId"] == bob_id, "bob's hangup ends it")
    for device in (alice_phone, bob_phone, tablet, carol_phone):
        await device.settle(SETTLE_SECONDS)
    for device in (alice_phone, bob_phone, carol_phone):
        check(count(device, "call_timeout", group_id) == 1, f"{device.name}: one call_timeout for the group call")
    with_bob = [(r["status"], r["mediaType"]) for r in records(bob["accessToken"], conversation)
                if r["callId"] == group_id]
    check(with_bob == [("completed", "video")], f"bob's record of the group call: {with_bob}")
    carol_conversation = "si:" + ":".join(sorted([alice_id, carol_id], key=str.encode))
    with_carol = [(r["status"], r["mediaType"]) for r in records(carol["accessToken"], carol_conversation)]
    check(with_carol == [("missed", "video")], f"carol's record: {with_carol}")

    for device in (alice_phone, bob_phone, tablet, carol_phone):
        await device.close()
    print("calls: ring on two devices across instances, answered elsewhere, hangup with a record; a timeout once; "
          "a 3-party video call with one callee timing out")


if __name__ == "__main__":
    asyncio.run(main())

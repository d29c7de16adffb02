"""Issue 22's presence end to end on two `parley serve` instances of one database (scripts/e2e/88-presence.sh).

Alice (first instance) and Bob become friends; Alice subscribes to Bob's presence.
1. Bob connects on the second instance: Alice gets `presence` online; he says `away`, then closes: away, offline
   with `lastSeen`; `POST /api/users/presence` on either instance agrees.
2. Bob connects on both instances and closes the second instance's socket: no offline (he is still online).
3. Bob hides his last-seen time: the REST answer has his status and no `lastSeen`.
4. Bob connects on the second instance only and that instance is killed (SIGKILL): Alice gets offline once its
   heartbeat is stale.
Settings: see scripts/e2e/lib/seeds/client.py (SEEDS_BASE, SEEDS_OTHER_BASE, SEEDS_APP_KEY); PRESENCE_KILL_PID, the
second instance's pid.
"""
import asyncio
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds"))
from client import BASE, OTHER_BASE, Device, check, http, password_login, register  # noqa: E402

KILL_PID = int(os.environ["PRESENCE_KILL_PID"])


def session(answer, what):
    check(answer.status == 200 and isinstance(answer.body, dict), f"{what}: {answer}")
    return answer.body["data"]


async def status(device, user_id, wanted, timeout=10):
    """The entry of the next `presence` frame that says `user_id` is `wanted`."""
    def matches(frame):
        users = (frame.get("data") or {}).get("users") or []
        return frame.get("type") == "presence" and any(
            u.get("userId") == user_id and u.get("status") == wanted for u in users)
    frame = await device.next(matches, f"{user_id} {wanted}", timeout=timeout)
    return next(u for u in frame["data"]["users"] if u["userId"] == user_id)


def lookup(token, user_id, base):
    answer = http("POST", "/api/users/presence", {"userIds": [user_id]}, token=token, base=base)
    check(answer.status == 200, f"presence lookup: {answer}")
    users = answer.body["data"]["users"]
    check(len(users) == 1 and users[0]["userId"] == user_id, f"presence lookup: {users}")
    return users[0]


async def agreed(token, user_id, predicate, what):
    """Both instances' `POST /api/users/presence` answers for `user_id` satisfy `predicate` (the database follows the
    live events by one batch write, so it is polled, bounded)."""
    deadline = time.monotonic() + 10
    while True:
        answers = [lookup(token, user_id, base) for base in (BASE, OTHER_BASE)]
        if all(predicate(a) for a in answers):
            return
        check(time.monotonic() < deadline, f"REST presence never agreed ({what}): {answers}")
        await asyncio.sleep(0.1)


async def main():
    alice = session(register("alice"), "alice registers")
    bob = session(register("bob"), "bob registers")
    stranger = session(register("stranger"), "a stranger registers")
    bob_id = bob["user"]["id"]
    sent = http("POST", "/api/im/friends/requests", {"userId": bob_id}, token=alice["accessToken"])
    check(sent.status == 201, f"friend request: {sent}")
    request_id = sent.body["data"]["request"]["id"]
    accepted = http("POST", f"/api/im/friends/requests/{request_id}/accept", token=bob["accessToken"],
                    base=OTHER_BASE)
    check(accepted.status == 200, f"accept: {accepted}")

    alice_phone = await Device("alice-phone", alice["imToken"], base=BASE).connect()
    ack = await alice_phone.request("presence_subscribe", {"userIds": [bob_id, stranger["user"]["id"]]})
    check([u["userId"] for u in ack["users"]] == [bob_id], f"only the friend is subscribed: {ack}")
    check(ack["users"][0]["status"] == "offline", f"bob starts offline: {ack}")

    # 1. Online, away, offline on the other instance.
    bob_phone = await Device("bob-phone", bob["imToken"], base=OTHER_BASE).connect()
    await status(alice_phone, bob_id, "online")
    await bob_phone.request("presence_set", {"status": "away"})
    await status(alice_phone, bob_id, "away")
    await bob_phone.close()
    offline = await status(alice_phone, bob_id, "offline")
    check("lastSeen" in offline, f"offline carries lastSeen: {offline}")
    await agreed(alice["accessToken"], bob_id, lambda a: a["status"] == "offline" and "lastSeen" in a,
                 "offline, last seen")

    # 2. Two instances: closing one socket leaves him online.
    bob_tablet = session(password_login("bob", platform="android"), "bob logs in on a tablet")
    bob_here = await Device("bob-tablet", bob_tablet["imToken"], base=BASE).connect()
    await status(alice_phone, bob_id, "online")
    bob_phone = await Device("bob-phone", bob["imToken"], base=OTHER_BASE).connect()
    await bob_phone.close()
    await alice_phone.settle(1.5)
    flips = [f for f in alice_phone.frames("presence")
             if any(u["userId"] == bob_id and u["status"] != "online" for u in f["data"]["users"])]
    check(not flips, f"bob went offline while a socket was open: {flips}")
    await bob_here.close()
    await status(alice_phone, bob_id, "offline")

    # 3. Hidden last seen: the status stays, the time goes.
    hidden = http("PATCH", "/api/users/me/presence", {"showLastSeen": False}, token=bob["accessToken"])
    check(hidden.status == 200 and hidden.body["data"] == {"showLastSeen": False}, f"hide: {hidden}")
    await agreed(alice["accessToken"], bob_id, lambda a: a == {"userId": bob_id, "status": "offline"},
                 "hidden last seen")

    # 4. The instance holding his only socket dies.
    bob_phone = await Device("bob-phone", bob["imToken"], base=OTHER_BASE).connect()
    await status(alice_phone, bob_id, "online")
    os.kill(KILL_PID, signal.SIGKILL)
    killed = time.monotonic()
    await status(alice_phone, bob_id, "offline", timeout=40)
    seconds = time.monotonic() - killed
    print(f"presence across two instances: online/away/offline events, REST agrees, lastSeen hidden; "
          f"offline {seconds:.1f}s after the other instance was killed")


asyncio.run(main())

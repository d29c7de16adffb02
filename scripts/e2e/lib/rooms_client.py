"""Chat rooms against two Parley instances on one database (scripts/e2e/87-rooms.sh).

Usage: rooms_client.py FIRST_BASE_URL SECOND_BASE_URL APP_KEY. Users on both instances enter one room; messages
reach whoever is inside on either instance; a later entrant gets the recent history in the enter ack (and through
REST, paged by cursor); a command message is delivered but kept out of history; the online count covers both
instances; leaving and closing stop delivery; a dismissal reaches the other instance. Prints one summary line; exits
non-zero (with the reason) on the first failed check. Every wait is bounded.
"""
import asyncio
import json
import sys
import time

from websockets.asyncio.client import connect

import rest_client
from rest_client import TIMEOUT, check, next_frame, rest

FIRST, SECOND, APP_KEY = sys.argv[1], sys.argv[2], sys.argv[3]


def register(base, username):
    return rest_client.register(base, APP_KEY, username)


class Device:
    """One WebSocket; frames that are not awaited yet are kept for later."""

    def __init__(self, name, base, session):
        self.name, self.base, self.session = name, base, session
        self.buffer, self.counter, self.ws = [], 0, None

    async def connect(self):
        url = self.base.replace("http://", "ws://") + "/ws"
        self.ws = await connect(url, additional_headers={"Authorization": "Bearer " + self.session["imToken"]},
                                open_timeout=TIMEOUT)
        hello = json.loads(await asyncio.wait_for(self.ws.recv(), TIMEOUT))
        check(hello["type"] == "hello", f"{self.name}: first frame {hello}")
        return self

    async def next(self, predicate, what, timeout=TIMEOUT):
        return await next_frame(self.ws, self.buffer, predicate, self.name, what, timeout)

    async def message(self, content):
        frame = await self.next(lambda f: f.get("type") == "message" and f["data"].get("content") == content,
                                f"room message {content!r}")
        return frame["data"]

    async def request(self, kind, data=None, expect_error=None):
        self.counter += 1
        req_id = f"{self.name}-{self.counter}"
        await self.ws.send(json.dumps({"type": kind, "reqId": req_id, "data": data or {}}))
        answer = await self.next(lambda f: f.get("reqId") == req_id, f"answer to {kind}")
        if expect_error is not None:
            check(answer["type"] == "error" and answer["data"]["code"] == expect_error,
                  f"{self.name} {kind}: expected error {expect_error}, got {answer}")
            return answer["data"]
        check(answer["type"] == "ack", f"{self.name} {kind}: {answer}")
        return answer["data"]

    async def quiet(self, kind, seconds=0.5):
        """No frame of `kind` arrives within `seconds`."""
        try:
            await self.next(lambda f: f.get("type") == kind, kind, timeout=seconds)
        except SystemExit:
            return True
        return False


def say(room_id, content, **extra):
    return {"toId": room_id, "chatType": "room", "msgType": "text", "content": content, **extra}


def online(base, token, room_id):
    status, body = rest(base, "GET", f"/api/im/rooms/{room_id}", token=token)
    check(status == 200, f"room info: {status} {body}")
    return body["data"]["online"]


async def main():
    alice_s, bob_s, carol_s = register(FIRST, "alice"), register(SECOND, "bob"), register(SECOND, "carol")
    alice = await Device("alice", FIRST, alice_s).connect()
    bob = await Device("bob", SECOND, bob_s).connect()
    carol = await Device("carol", SECOND, carol_s).connect()

    status, body = rest(FIRST, "POST", "/api/im/rooms", {"name": "Lobby"}, token=alice_s["accessToken"])
    check(status == 201, f"create room: {status} {body}")
    room_id = body["data"]["roomId"]

    # Alice (first instance) and bob (second) enter; seed 002 passes room ids as numbers.
    entered = await alice.request("room_enter", {"roomId": int(room_id)})
    check(entered["room"]["roomId"] == room_id and entered["messages"] == [], f"alice's enter ack {entered}")
    await bob.request("room_enter", {"roomId": room_id})
    await bob.request("send", {"toId": room_id, "chatType": "room", "msgType": "custom",
                               "content": "bob 进入房间", "noUnread": True})
    command = await alice.message("bob 进入房间")
    check(command.get("noUnread") is True and command["chatType"] == "room", f"command {command}")

    # Messages across instances, both ways; the sender gets the ack, not an echo.
    for n in range(3):
        sent = await alice.request("send", say(room_id, f"from alice {n}"))
        got = await bob.message(f"from alice {n}")
        check(got["id"] == sent["id"] and got["fromId"] == alice_s["user"]["id"], f"bob got {got}")
    sent = await bob.request("send", say(room_id, "from bob"))
    got = await alice.message("from bob")
    check(got["id"] == sent["id"] and got["conversationId"] == room_id, f"alice got {got}")
    check(await alice.quiet("message"), "alice got an echo of her own message")
    await carol.request("send", say(room_id, "outsider"), expect_error=1506)

    # Carol enters on the second instance: the recent history, newest first, without the command.
    entered = await carol.request("room_enter", {"roomId": room_id})
    history = [m["content"] for m in entered["messages"]]
    check(history == ["from bob", "from alice 2", "from alice 1", "from alice 0"], f"carol's history {history}")
    # REST history from the other instance, paged by cursor.
    status, page = rest(FIRST, "GET", f"/api/im/rooms/{room_id}/messages?limit=3", token=carol_s["accessToken"])
    check(status == 200 and page["data"]["hasMore"] is True, f"history page {status} {page}")
    status, rest_page = rest(FIRST, "GET",
                             f"/api/im/rooms/{room_id}/messages?limit=3&cursor={page['data']['nextCursor']}",
                             token=carol_s["accessToken"])
    check([m["content"] for m in page["data"]["messages"] + rest_page["data"]["messages"]] ==
          ["from bob", "from alice 2", "from alice 1", "from alice 0"], f"paged history {page} {rest_page}")

    # Three inside: each instance writes its own count every 2 s, so both agree within a few seconds.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        counts = (online(FIRST, alice_s["accessToken"], room_id), online(SECOND, bob_s["accessToken"], room_id))
        if counts == (3, 3):
            break
        await asyncio.sleep(0.2)
    check(counts == (3, 3), f"online counts {counts}")

    # Bob leaves: no more messages for him; carol still gets them.
    left = await bob.request("room_leave", {"roomId": room_id})
    check(left["left"] is True, f"leave {left}")
    await alice.request("send", say(room_id, "after bob left"))
    await carol.message("after bob left")
    check(await bob.quiet("message"), "bob got a message after leaving")

    # Carol's socket closes: she is no longer inside.
    await carol.ws.close()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and online(FIRST, alice_s["accessToken"], room_id) != 1:
        await asyncio.sleep(0.2)
    check(online(FIRST, alice_s["accessToken"], room_id) == 1, "carol's closed socket is still counted")

    # Bob re-enters on the second instance; alice (the creator) dismisses on the first; bob is told.
    await bob.request("room_enter", {"roomId": room_id})
    status, body = rest(FIRST, "DELETE", f"/api/im/rooms/{room_id}", token=alice_s["accessToken"])
    check(status == 200, f"dismiss {status} {body}")
    notice = await bob.next(lambda f: f.get("type") == "room_dismissed", "room_dismissed")
    check(notice["data"]["roomId"] == room_id, f"dismissal {notice}")
    await bob.request("room_enter", {"roomId": room_id}, expect_error=1505)
    status, body = rest(SECOND, "GET", f"/api/im/rooms/{room_id}", token=bob_s["accessToken"])
    check(status == 404 and body["code"] == 1505, f"dismissed room {status} {body}")

    for device in (alice, bob):
        await device.ws.close()
    print("room across two instances: enter, command, 4 messages both ways, history on enter and by cursor, "
          "online 3 on both, leave, close, dismiss")


asyncio.run(main())

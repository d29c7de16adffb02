"""Real WebSocket clients against two Parley instances on one database (scripts/e2e/50-realtime.sh).

Usage: realtime_client.py FIRST_BASE_URL SECOND_BASE_URL APP_KEY [PHASE]. PHASE is `main` (the default),
`slow` (a client that stops reading is cut off while another keeps its latency; the servers run with a small
PARLEY_WS_MAX_QUEUED_BYTES) or `expiry` (the app's IM tokens were set to expire after seconds). Prints one summary
line; exits non-zero (with the reason) on the first failed check. Every wait is bounded.
"""
import asyncio
import json
import sys
import urllib.request
import uuid

from websockets.asyncio.client import connect

import rest_client
from rest_client import TIMEOUT, check, next_frame, rest

FIRST, SECOND, APP_KEY = sys.argv[1], sys.argv[2], sys.argv[3]
PHASE = sys.argv[4] if len(sys.argv) > 4 else "main"


def register(base, username, platform="ios"):
    return rest_client.register(base, APP_KEY, username, platform)


def login(base, username, platform, model="e2e device"):
    status, body = rest(base, "POST", "/api/auth/login",
                        {"username": username, "password": "e2e password 1", "platform": platform,
                         "deviceModel": model}, app_key=APP_KEY)
    check(status == 200, f"login {username}: {status} {body}")
    return body["data"]


class Device:
    """One WebSocket; frames that are not awaited yet are kept for later."""

    def __init__(self, name, base, session):
        self.name, self.base, self.session = name, base, session
        self.buffer, self.counter, self.ws = [], 0, None

    async def connect(self, max_queue=16):
        url = self.base.replace("http://", "ws://") + "/ws"
        self.ws = await connect(url, additional_headers={"Authorization": "Bearer " + self.session["imToken"]},
                                open_timeout=TIMEOUT, max_size=2 ** 22, max_queue=max_queue)
        hello = json.loads(await asyncio.wait_for(self.ws.recv(), TIMEOUT))
        check(hello["type"] == "hello", f"{self.name}: first frame {hello}")
        return self

    async def next(self, predicate, what):
        return await next_frame(self.ws, self.buffer, predicate, self.name, what, TIMEOUT)

    async def event(self, kind, what=None, **fields):
        def matches(frame):
            if frame.get("type") != kind:
                return False
            data = frame.get("data") or {}
            return all(data.get(key) == value for key, value in fields.items())
        return (await self.next(matches, what or kind))["data"]

    async def request(self, kind, data=None):
        self.counter += 1
        req_id = f"{self.name}-{self.counter}"
        await self.ws.send(json.dumps({"type": kind, "reqId": req_id, "data": data or {}}))
        answer = await self.next(lambda f: f.get("reqId") == req_id, f"answer to {kind}")
        check(answer["type"] == "ack", f"{self.name} {kind}: {answer}")
        return answer["data"]

    async def quiet(self, kind, seconds=0.3, **fields):
        """No frame of `kind` (with `fields`) arrives within `seconds`."""
        try:
            await asyncio.wait_for(self.event(kind, **fields), seconds)
        except (asyncio.TimeoutError, SystemExit):
            return True
        return False


async def main():
    alice_s, bob_s, carol_s = register(FIRST, "alice"), register(SECOND, "bob"), register(FIRST, "carol")
    alice_web_s = login(SECOND, "alice", "web")
    alice = await Device("alice-ios", FIRST, alice_s).connect()
    alice_web = await Device("alice-web", SECOND, alice_web_s).connect()
    bob = await Device("bob", SECOND, bob_s).connect()
    carol = await Device("carol", FIRST, carol_s).connect()
    alice_id, bob_id, carol_id = alice_s["user"]["id"], bob_s["user"]["id"], carol_s["user"]["id"]

    # 1:1 across instances: the peer and the sender's other device; no echo to the sender.
    first_client_id = str(uuid.uuid4())
    sent = await alice.request("send", {"toId": bob_id, "chatType": "single", "msgType": "text",
                                        "content": "hi bob", "clientMsgId": first_client_id})
    await bob.event("message", id=sent["id"])
    await alice_web.event("message", id=sent["id"])
    # OpenIM's onConversationChanged, on the other instance: bob's summary with his unread count and the message.
    summary = await bob.event("conversation", conversationId=sent["conversationId"], unreadCount=1)
    latest = summary.get("latestMessage") or {}
    check(latest.get("id") == sent["id"] and latest.get("content") == "hi bob", f"conversation event {summary}")
    check(await alice.quiet("message", id=sent["id"]), "the sending device got its own message back")

    # Edit, read receipt, revoke, across instances.
    await alice.request("edit", {"msgId": sent["id"], "content": "hi bob!"})
    edited = await bob.event("edit", id=sent["id"])
    # The wire seed 001's ImMessage decodes: content a string, editedAt epoch milliseconds.
    check(edited["content"] == "hi bob!" and isinstance(edited["editedAt"], int), f"edit event {edited}")
    await bob.request("read", {"conversationId": sent["conversationId"], "seq": sent["seq"]})
    await alice.event("read", userId=bob_id, seq=sent["seq"])
    # Revoked by the clientMsgId it was sent with (seed 000's revokeMessage(conversationID:clientMsgID:)).
    revoked = await alice.request("revoke", {"conversationId": sent["conversationId"], "clientMsgId": first_client_id})
    check(revoked["id"] == sent["id"] and revoked["content"] == "", f"revoke ack {revoked}")
    revoke = await bob.event("revoke", msgId=sent["id"])
    check(revoke["operatorId"] == alice_id, f"revoke event {revoke}")

    # A group on both instances: every member's every device.
    status, body = rest(FIRST, "POST", "/api/im/groups", {"name": "e2e", "memberIds": [bob_id, carol_id]},
                        token=alice_s["accessToken"])
    check(status == 201, f"create group: {status} {body}")
    group_id = body["data"]["groupId"]
    posted = await bob.request("send", {"toId": group_id, "chatType": "group", "msgType": "text",
                                        "content": "hello group", "clientMsgId": str(uuid.uuid4())})
    for device in (alice, alice_web, carol):
        await device.event("message", id=posted["id"])

    # Carol keeps her cursor, goes away, misses 500 messages, comes back on the other instance.
    cursor = (await carol.request("sync"))["cursor"]
    await carol.ws.close()
    sent_ids = []
    for n in range(500):
        status, body = rest(SECOND, "POST", "/api/im/messages",
                            {"toId": carol_id, "chatType": "single", "msgType": "text", "content": f"missed {n}",
                             "clientMsgId": f"missed-{n}"}, token=bob_s["accessToken"])
        check(status == 201, f"send {n}: {status} {body}")
        sent_ids.append(body["data"]["id"])
    carol = await Device("carol-back", SECOND, carol_s).connect()
    received = []
    for _ in range(100):
        page = await carol.request("sync", {"cursor": cursor, "limit": 200})
        received += [change["message"]["id"] for change in page["changes"] if change["type"] == "message"]
        cursor = page["cursor"]
        if not page["hasMore"] and len(received) >= len(sent_ids):
            break
        if not page["hasMore"]:
            await asyncio.sleep(0.05)
    check(received == sent_ids, f"sync after reconnect: {len(received)} of {len(sent_ids)}, in order: {received == sorted(received, key=int)}")

    # A second login on the same platform displaces bob's session on the other instance.
    login(FIRST, "bob", "ios", model="Second Phone")
    conflict = await bob.event("account_conflict")
    check("another device" in conflict["text"], f"account_conflict {conflict}")
    try:
        await asyncio.wait_for(bob.ws.wait_closed(), TIMEOUT)
    except asyncio.TimeoutError:
        raise SystemExit("FAILED: bob's connection stayed open after account_conflict")
    code = bob.ws.protocol.close_code
    check(code == 4500, f"close code {code}")

    for device in (alice, alice_web, carol):
        await device.ws.close()
    print("1:1, group, edit/read/revoke across instances; 500 missed messages synced once after reconnecting "
          "elsewhere; account_conflict + 4500")


async def slow():
    sender = register(FIRST, "slow-sender")
    stalled = await Device("stalled", FIRST, register(FIRST, "stalled")).connect(max_queue=1)
    healthy = await Device("healthy", FIRST, register(FIRST, "healthy")).connect()
    big = "x" * 90000
    worst = 0.0
    loop = asyncio.get_running_loop()
    # ~18 MB for a client that reads nothing (max_queue=1: the library stops reading after one frame).
    for n in range(200):
        status, body = rest(FIRST, "POST", "/api/im/messages",
                            {"toId": stalled.session["user"]["id"], "chatType": "single", "msgType": "text",
                             "content": big, "clientMsgId": f"big-{n}"}, token=sender["accessToken"])
        check(status == 201, f"send {n}: {status}")
        if n % 20 == 0:
            start = loop.time()
            status, body = rest(FIRST, "POST", "/api/im/messages",
                                {"toId": healthy.session["user"]["id"], "chatType": "single", "msgType": "text",
                                 "content": f"ping {n}", "clientMsgId": f"ping-{n}"}, token=sender["accessToken"])
            await healthy.event("message", content=f"ping {n}")
            worst = max(worst, loop.time() - start)
    check(worst < 2.0, f"the healthy client waited {worst:.3f}s for a message")
    for _ in range(150):
        with urllib.request.urlopen(FIRST + "/metrics", timeout=TIMEOUT) as response:
            metrics = response.read().decode()
        if 'parley_websocket_closes_total{code="4000"} 1' in metrics:
            break
        await asyncio.sleep(0.1)
    else:
        raise SystemExit("FAILED: the stalled client was not closed with 4000")
    await healthy.ws.close()
    print(f"a client that stopped reading was closed with 4000; the healthy one's worst round trip {worst * 1000:.0f} ms")


async def expiry():
    device = await Device("expiring", SECOND, register(SECOND, "expiring")).connect()
    notice = await device.event("token_expired")
    try:
        await asyncio.wait_for(device.ws.wait_closed(), TIMEOUT)
    except asyncio.TimeoutError:
        raise SystemExit("FAILED: the connection stayed open after token_expired")
    code = device.ws.protocol.close_code
    check(code == 4002, f"close code {code}")
    print(f"token_expired then 4002 ({notice['reason']})")


asyncio.run({"main": main, "slow": slow, "expiry": expiry}[PHASE]())

"""Seed 004's friends (issue 19's end-to-end line): Bmob IM's `UserService friendsWithCompletion` (friend objects,
each turned into a `BmobIMUserInfo` with `userInfoWithBmobUser`) and `addFriendNoticeWithUserId`, and "用户可以与陌生人
聊天，也可以与好友聊天，这个由我们控制" (whether strangers may chat is the app's choice), on two instances of one database.

Alice and Bob each have a phone and a web client (two sessions), one socket on each instance; a REST call goes to the
instance its device is connected to. Carol is a stranger with one phone. The flow: sign up, Alice finds Bob by
username and asks him, Bob accepts, both list their friends, they chat, Alice blocks Bob (his 1:1 sends are refused
with 1119 over WebSocket and REST, so is a friend request), unblocks (he can send again), they become friends again,
Carol chats with Bob while the app lets anyone, then `parley app update --direct-messages friends` refuses her (1120)
while the friends still chat, and Bob deletes his account (his sockets end with 4501, Alice hears the friendship end,
his logins answer 1048). Bob's web client leaves before the block and comes back on the other instance: `sync` from
the cursor it took before leaving gives it what it missed, each once.

After every step each live socket must have received exactly the events of that step meant for it (social events,
messages, `session_ended`), each once: the device whose REST call caused a social event has the answer instead.
Every answer and event is decoded with the types a Swift Decodable of the client would declare (below).
Extra settings (scripts/e2e/96-social.sh sets them; see client.py for the others):
  SEEDS_PARLEY_BIN   the parley binary, for `parley app update` (with DATABASE_URL = SEEDS_DATABASE_URL)
"""
import asyncio
import collections
import os
import subprocess
import uuid

import wire
from client import (APP_KEY, BASE, DATABASE_URL, OTHER_BASE, TIMEOUT, Device, Flow, check, decoded, done, eventually,
                    http, ok, query, refused)

flow = Flow("004-social")
PASSWORD = "seed password 1"
# How long every socket keeps reading after a step's events arrived, so that a second copy would be seen.
SETTLE_SECONDS = 0.3

# --- the client's types --------------------------------------------------------------------------------------------
# BmobIMUserInfo from a user: objectId, name, avatar; Parley's PublicProfile adds signature, ex and the deleted mark.
Profile = wire.Struct("UserInfo", id=wire.STRING, nickname=wire.STRING, avatar=wire.Optional(wire.STRING),
                      signature=wire.STRING, ex=wire.Optional(wire.ANY), deleted=wire.BOOL)
Friend = wire.Struct("Friend", userId=wire.STRING, remark=wire.STRING, createdAt=wire.STRING, user=Profile)
FriendPage = wire.Struct("FriendPage", friends=wire.Array(Friend), removed=wire.Array(wire.STRING), cursor=wire.STRING,
                         hasMore=wire.BOOL)
RequestStatus = wire.Enum("FriendRequestStatus", ["pending", "accepted", "rejected", "withdrawn"])
FriendRequest = wire.Struct("FriendRequest", id=wire.STRING, fromId=wire.STRING, toId=wire.STRING,
                            message=wire.STRING, status=RequestStatus, createdAt=wire.STRING,
                            handledAt=wire.Optional(wire.STRING), user=wire.Optional(Profile))
FriendRequestResult = wire.Struct("FriendRequestResult", request=FriendRequest, friend=wire.Optional(Friend))
FriendRequestPage = wire.Struct("FriendRequestPage", requests=wire.Array(FriendRequest),
                                cursor=wire.Optional(wire.STRING), hasMore=wire.BOOL)
SearchPage = wire.Struct("UserSearchPage", users=wire.Array(Profile), cursor=wire.Optional(wire.STRING),
                         hasMore=wire.BOOL)
BlockedUser = wire.Struct("BlockedUser", userId=wire.STRING, createdAt=wire.STRING, user=Profile)
BlockPage = wire.Struct("BlockPage", blocks=wire.Array(BlockedUser), cursor=wire.Optional(wire.STRING),
                        hasMore=wire.BOOL)
Unblocked = wire.Struct("UnblockResult", userId=wire.STRING, unblocked=wire.BOOL)
UserIdOnly = wire.Struct("UserIdOnly", userId=wire.STRING)
ErrorData = wire.Struct("ErrorFrameData", code=wire.INT, message=wire.STRING)
SessionEnded = wire.Struct("SessionEnded", reason=wire.Enum("SessionEndReason", [
    "logout", "revoked", "relogin", "token_reuse", "banned", "deleted"]))
SyncPage = wire.Struct("SyncPage", changes=wire.Array(wire.ANY), cursor=wire.STRING, hasMore=wire.BOOL)

# Every frame type counted after each step, with the type its data decodes as.
COUNTED = {
    "friend_request": FriendRequest, "friend_request_rejected": FriendRequest,
    "friend_request_withdrawn": FriendRequest, "friend_added": Friend, "friend_updated": Friend,
    "friend_removed": UserIdOnly, "block": BlockedUser, "unblock": UserIdOnly, "profile": Profile,
    "message": wire.ImMessage, "session_ended": SessionEnded,
}
SOCIAL = {kind for kind in COUNTED if kind not in ("message", "session_ended")}


def key(kind, data):
    """What tells one event from another of its type: the request's, message's or profile's id, else the user's."""
    if kind in ("friend_request", "friend_request_rejected", "friend_request_withdrawn", "message", "profile"):
        return kind, data.get("id")
    if kind == "session_ended":
        return kind, data.get("reason")
    return kind, data.get("userId")


# --- devices and their instances -----------------------------------------------------------------------------------
class Client:
    """One device: its login (session), its instance, its socket there."""

    def __init__(self, name, user_id, session, base):
        self.name, self.user_id, self.session, self.base = name, user_id, session, base
        self.device = None

    def rest(self, method, path, body=None):
        return http(method, path, body, token=self.session["accessToken"], base=self.base)

    async def connect(self, base=None):
        self.base = base or self.base
        self.device = await Device(self.name, self.session["imToken"], base=self.base).connect()
        live[self.name] = self.device
        marks[self.name] = len(self.device.received)
        return self


live = {}     # device name -> open socket whose every counted frame is checked after each step
marks = {}    # device name -> how many frames of that socket the previous checks covered
checked = []  # every (device, type, key) delivery checked, for the summary


def sign_up(username, base):
    """[user signUpInBackgroundWithBlock:] on the phone."""
    answer = http("POST", "/api/auth/register", {"username": username, "password": PASSWORD, "platform": "ios"},
                  headers={"X-App-Key": APP_KEY}, base=base)
    return ok(answer, wire.PasswordLogin, f"signUp {username}")


def log_in(username, platform, base):
    answer = http("POST", "/api/auth/login", {"username": username, "password": PASSWORD, "platform": platform},
                  headers={"X-App-Key": APP_KEY}, base=base)
    return answer


async def expect(step, deliveries):
    """Waits (bounded) for each (type, key) of `deliveries` {device name: [...]} on its device, lets every live
    socket read a little longer, then requires that each got exactly what it lists since the previous check (devices
    not listed: nothing), each once, every frame decoding as the client's type. Returns {(name, type, key): data}."""
    unknown = set(deliveries) - set(live)
    check(not unknown, f"{step}: no live socket {unknown}")

    async def arrivals(name, wanted):
        for kind, wanted_key in wanted:
            await live[name].next(lambda f, k=kind, w=wanted_key: f.get("type") == k
                                  and key(k, f.get("data") or {}) == (k, w), f"{step}: {kind} {wanted_key}")
    # Every socket reads at once: websockets 13.1 drops frames still unread when the connection closes, and a
    # deleted account's sockets get `session_ended` just before their close.
    await asyncio.gather(*(arrivals(name, wanted) for name, wanted in deliveries.items()))
    await asyncio.gather(*(device.settle(SETTLE_SECONDS) for device in live.values()))
    seen = {}
    for name, device in live.items():
        frames = [f for f in device.received[marks[name]:] if f.get("type") in COUNTED]
        got = collections.Counter(key(f["type"], f.get("data") or {}) for f in frames)
        want = collections.Counter((kind, k) for kind, k in deliveries.get(name, []))
        check(got == want, f"{step}: {name} got {dict(got)}, expected each of {dict(want)} once")
        for frame in frames:
            data = decoded(COUNTED[frame["type"]], frame["data"], f"{step}: {name}'s {frame['type']} event")
            seen[(name, *key(frame["type"], frame["data"]))] = data
            checked.append((name, *key(frame["type"], frame["data"])))
        marks[name] = len(device.received)
        device.buffer = [f for f in device.buffer if f.get("type") not in COUNTED]
    return seen


def chat_body(to, content):
    """BmobIMConversation sendMessage: a text message to the conversation's peer."""
    return {"toId": to, "chatType": "single", "msgType": "text", "content": content, "clientMsgId": str(uuid.uuid4())}


async def send(client, to, content):
    ack = await client.device.request("send", chat_body(to, content))
    return decoded(wire.ImMessage, ack, f"{client.name} sendMessage")["id"]


async def send_refused(client, to, content, code, message=None):
    """The socket's `send` answered with an `error` frame of `code`; REST's `POST /api/im/messages` the same."""
    answer = await client.device.call("send", chat_body(to, content))
    check(answer.get("type") == "error", f"{client.name} send to {to}: expected an error frame, got {answer}")
    error = decoded(ErrorData, answer.get("data"), f"{client.name}'s error frame")
    check(error["code"] == code, f"{client.name} send to {to}: code {error['code']}, expected {code}")
    check(message is None or error["message"] == message, f"error message {error['message']!r}, not {message!r}")
    envelope = refused(client.rest("POST", "/api/im/messages", chat_body(to, content)), f"REST send to {to}", code)
    check(message is None or envelope["message"] == message, f"REST message {envelope['message']!r}")


async def sync_from(client, cursor):
    """`sync` pages from `cursor` until `hasMore` is false (bounded); the changes and the last cursor."""
    changes = []
    for _ in range(20):
        page = decoded(SyncPage, await client.device.request("sync", {"cursor": cursor}), f"{client.name} sync")
        changes += page["changes"]
        cursor = page["cursor"]
        if not page["hasMore"]:
            return changes, cursor
    raise SystemExit(f"FAILED: {client.name}'s sync still had more after 20 pages")


def replayed(changes, what):
    """The social changes (type and key, in order) and the message ids (in order) of a sync answer."""
    social, messages = [], []
    for change in changes:
        kind = change.get("type")
        if kind in SOCIAL:
            decoded(COUNTED[kind], change, f"{what}: a {kind} change")
            social.append(key(kind, change))
        elif kind == "message":
            messages.append(decoded(wire.ImMessage, change.get("message"), f"{what}: a message change")["id"])
    return social, messages


def friends_with_completion(client):
    """[UserService friendsWithCompletion:] -> one BmobIMUserInfo per friend object (all pages)."""
    infos, since = [], None
    for _ in range(10):
        page = ok(client.rest("GET", query("/api/im/friends", since=since)), FriendPage, f"{client.name} friends")
        for friend in page["friends"]:
            check(friend["user"]["id"] == friend["userId"], f"friend object {friend}")
            wire.epoch_ms(friend["createdAt"])
            infos.append({"userId": friend["user"]["id"], "name": friend["remark"] or friend["user"]["nickname"],
                          "avatar": friend["user"]["avatar"]})
        since = page["cursor"]
        if not page["hasMore"]:
            return infos
    raise SystemExit(f"FAILED: {client.name}'s friend list still had more after 10 pages")


async def main():
    with flow.step("signUp three users; a phone and a web client each for Alice and Bob, one per instance"):
        alice_s, bob_s, carol_s = sign_up("bmob_alice", BASE), sign_up("bmob_bob", OTHER_BASE), sign_up(
            "bmob_carol", BASE)
        alice_id, bob_id, carol_id = (s["user"]["id"] for s in (alice_s, bob_s, carol_s))
        alice_web_s = ok(log_in("bmob_alice", "web", OTHER_BASE), wire.PasswordLogin, "alice web login")
        bob_web_s = ok(log_in("bmob_bob", "web", BASE), wire.PasswordLogin, "bob web login")
        alice = await Client("alice.phone", alice_id, alice_s, BASE).connect()
        alice_web = await Client("alice.web", alice_id, alice_web_s, OTHER_BASE).connect()
        bob = await Client("bob.phone", bob_id, bob_s, OTHER_BASE).connect()
        bob_web = await Client("bob.web", bob_id, bob_web_s, BASE).connect()
        carol = await Client("carol.phone", carol_id, carol_s, BASE).connect()
        start = {c.name: (await c.device.request("sync"))["cursor"] for c in (alice, bob, carol)}

    with flow.step("Alice finds Bob by username"):
        page = ok(alice.rest("GET", query("/api/users/search", q="bmob_bob")), SearchPage, "search bmob_bob")
        check([u["id"] for u in page["users"]] == [bob_id], f"search bmob_bob found {page['users']}")
        found = page["users"][0]
        check(found["nickname"] == "bmob_bob" and not found["deleted"], f"Bob's profile {found}")

    with flow.step("addFriendNoticeWithUserId: Alice asks; Bob's devices and Alice's web client hear it"):
        result = ok(alice.rest("POST", "/api/im/friends/requests", {"userId": found["id"], "message": "我是 alice"}),
                    FriendRequestResult, "addFriendNoticeWithUserId")
        first = result["request"]
        check(first["status"] == "pending" and result["friend"] is None, f"the request {result}")
        check(first["fromId"] == alice_id and first["toId"] == bob_id, f"the request {first}")
        r1 = first["id"]
        seen = await expect("request", {"bob.phone": [("friend_request", r1)], "bob.web": [("friend_request", r1)],
                                        "alice.web": [("friend_request", r1)]})
        for name in ("bob.phone", "bob.web"):
            check(seen[(name, "friend_request", r1)]["user"]["id"] == alice_id, f"{name}: the request's user")
            check(seen[(name, "friend_request", r1)]["message"] == "我是 alice", f"{name}: the request's message")
        check(seen[("alice.web", "friend_request", r1)]["user"]["id"] == bob_id, "alice.web: the request's user")

    with flow.step("Bob accepts the incoming request; friend_added on every other device"):
        incoming = ok(bob.rest("GET", query("/api/im/friends/requests", direction="incoming")), FriendRequestPage,
                      "incoming requests")
        check([r["id"] for r in incoming["requests"]] == [r1], f"incoming {incoming}")
        accepted = ok(bob.rest("POST", f"/api/im/friends/requests/{r1}/accept"), Friend, "accept")
        check(accepted["userId"] == alice_id and accepted["user"]["nickname"] == "bmob_alice", f"accepted {accepted}")
        seen = await expect("accept", {"alice.phone": [("friend_added", bob_id)],
                                       "alice.web": [("friend_added", bob_id)],
                                       "bob.web": [("friend_added", alice_id)]})
        check(seen[("alice.phone", "friend_added", bob_id)]["user"]["nickname"] == "bmob_bob", "Alice's view")
        check(seen[("bob.web", "friend_added", alice_id)]["user"]["nickname"] == "bmob_alice", "Bob's view")

    with flow.step("friendsWithCompletion on both sides (each on its own instance)"):
        check([i["userId"] for i in friends_with_completion(alice)] == [bob_id], "Alice's friends")
        check([i["userId"] for i in friends_with_completion(bob)] == [alice_id], "Bob's friends")

    with flow.step("chat: each message on both devices of the peer and the sender's other device"):
        m1 = await send(alice, bob_id, "你好 bob")
        m2 = await send(bob, alice_id, "你好 alice")
        await expect("chat", {"bob.phone": [("message", m1)], "bob.web": [("message", m1), ("message", m2)],
                              "alice.web": [("message", m1), ("message", m2)], "alice.phone": [("message", m2)]})

    with flow.step("a stranger may chat while the app lets anyone (the default)"):
        m3 = await send(carol, bob_id, "陌生人你好")
        await expect("stranger", {"bob.phone": [("message", m3)], "bob.web": [("message", m3)]})

    with flow.step("Bob's web client takes a sync cursor and goes away"):
        away_cursor = (await bob_web.device.request("sync"))["cursor"]
        await bob_web.device.close()
        del live["bob.web"]

    with flow.step("Alice blocks Bob: the friendship ends, his 1:1 messages and requests are refused (1119)"):
        blocked = alice.rest("PUT", f"/api/im/blocks/{bob_id}")
        check(blocked.status == 201, f"block: {blocked}")
        check(ok(blocked, BlockedUser, "block")["userId"] == bob_id, "the block names Bob")
        await expect("block", {"alice.web": [("friend_removed", bob_id), ("block", bob_id)],
                               "bob.phone": [("friend_removed", alice_id)]})
        await send_refused(bob, alice_id, "你在吗", 1119, "refused")
        refused(bob.rest("POST", "/api/im/friends/requests", {"userId": alice_id}), "a request to the blocker", 1119)
        blocks = ok(alice.rest("GET", "/api/im/blocks"), BlockPage, "Alice's blocks")
        check([b["userId"] for b in blocks["blocks"]] == [bob_id], f"Alice's blocks {blocks}")
        check(friends_with_completion(alice) == [] and friends_with_completion(bob) == [], "friends after the block")
        # Nothing of the refused messages reached anybody.
        await expect("refused", {})

    with flow.step("Alice unblocks Bob from her web client; he can send again"):
        lifted = ok(alice_web.rest("DELETE", f"/api/im/blocks/{bob_id}"), Unblocked, "unblock")
        check(lifted == {"userId": bob_id, "unblocked": True}, f"unblock {lifted}")
        await expect("unblock", {"alice.phone": [("unblock", bob_id)]})
        m4 = await send(bob, alice_id, "谢谢")
        await expect("after unblock", {"alice.phone": [("message", m4)], "alice.web": [("message", m4)]})

    with flow.step("friends again: Bob asks, Alice accepts on her web client"):
        again = ok(bob.rest("POST", "/api/im/friends/requests", {"userId": alice_id}), FriendRequestResult, "request")
        r2 = again["request"]["id"]
        check(again["request"]["status"] == "pending" and r2 != r1, f"the second request {again}")
        await expect("request again", {"alice.phone": [("friend_request", r2)],
                                       "alice.web": [("friend_request", r2)]})
        ok(alice_web.rest("POST", f"/api/im/friends/requests/{r2}/accept"), Friend, "accept again")
        await expect("accept again", {"alice.phone": [("friend_added", bob_id)],
                                      "bob.phone": [("friend_added", alice_id)]})

    with flow.step("Bob's web client comes back on the other instance: sync replays what it missed, once"):
        await bob_web.connect(OTHER_BASE)
        changes, _ = await sync_from(bob_web, away_cursor)
        social, messages = replayed(changes, "bob.web's sync")
        check(social == [("friend_removed", alice_id), ("friend_request", r2), ("friend_added", alice_id)],
              f"bob.web's sync replays {social}")
        check(messages == [m4], f"bob.web's sync replays messages {messages}, expected [{m4}]")
        # Live, the new socket gets none of it again.
        await expect("reconnected", {})

    with flow.step("parley app update --direct-messages friends: a stranger is refused (1120), friends chat"):
        cli = subprocess.run([os.environ["SEEDS_PARLEY_BIN"], "app", "update", APP_KEY, "--direct-messages",
                              "friends"], env={**os.environ, "DATABASE_URL": DATABASE_URL}, capture_output=True,
                             text=True, timeout=TIMEOUT)
        check(cli.returncode == 0 and "directMessages  friends" in cli.stdout, f"parley app update: {cli}")
        # Strict: the conversation Carol started before is no exception.
        await send_refused(carol, bob_id, "还在吗", 1120)
        await send_refused(carol, alice_id, "你好", 1120)
        m5 = await send(alice, bob_id, "朋友可以聊")
        m6 = await send(bob_web, alice_id, "是的")
        await expect("friends only", {"bob.phone": [("message", m5), ("message", m6)], "bob.web": [("message", m5)],
                                      "alice.web": [("message", m5), ("message", m6)],
                                      "alice.phone": [("message", m6)]})

    with flow.step("Bob deletes his account: his sockets end (4501), Alice hears it, his login answers 1048"):
        # Bob's sockets are read from before the request goes out (in a thread, so that the loop keeps reading):
        # a frame websockets has not handed out when the close comes is lost.
        deletion = asyncio.create_task(expect("deletion", {
            "bob.phone": [("session_ended", "deleted")], "bob.web": [("session_ended", "deleted")],
            "alice.phone": [("friend_removed", bob_id)], "alice.web": [("friend_removed", bob_id)]}))
        await eventually(lambda: all(c.device.ws.recv_messages.get_in_progress for c in (bob, bob_web)),
                         "Bob's sockets reading")
        answer = await asyncio.to_thread(bob.rest, "DELETE", "/api/users/me", {"password": PASSWORD})
        done(answer, "DELETE /api/users/me")
        await deletion
        for client in (bob, bob_web):
            code = await client.device.closed("account deleted")
            reason = client.device.ws.protocol.close_reason
            check(code == 4501 and reason == "account deleted", f"{client.name} closed {code} {reason!r}")
            del live[client.name]
        login = log_in("bmob_bob", "ios", BASE)
        check(login.status == 403, f"login after deletion: {login}")
        refused(login, "login after deletion", 1048)
        check(ok(alice.rest("GET", query("/api/users/search", q="bmob_bob")), SearchPage, "search")["users"] == [],
              "a deleted user is still found")
        gone = ok(alice.rest("POST", "/api/users/lookup", {"ids": [bob_id]}),
                  wire.Struct("Lookup", users=wire.Array(Profile)), "loadUserWithUserId")["users"]
        check(len(gone) == 1 and gone[0]["deleted"] and gone[0]["nickname"] == "", f"Bob's profile now {gone}")
        check(friends_with_completion(alice) == [], "Alice's friends after Bob left")

    with flow.step("sync from the start: every change once, in commit order"):
        changes, _ = await sync_from(alice, start["alice.phone"])
        social, messages = replayed(changes, "Alice's sync")
        check(social == [("friend_request", r1), ("friend_added", bob_id), ("friend_removed", bob_id),
                         ("block", bob_id), ("unblock", bob_id), ("friend_request", r2), ("friend_added", bob_id),
                         ("friend_removed", bob_id)], f"Alice's sync: {social}")
        check(messages == [m1, m2, m4, m5, m6], f"Alice's sync messages {messages}")
        greeting = next(c for c in changes if c.get("type") == "friend_request" and c.get("id") == r1)
        check(greeting["message"] == "我是 alice", f"the request's greeting in sync: {greeting}")
        changes, _ = await sync_from(carol, start["carol.phone"])
        check(replayed(changes, "Carol's sync") == ([], [m3]), f"Carol's sync {replayed(changes, 'Carol')}")
        await expect("the end", {})
        for client in (alice, alice_web, carol):
            await client.device.close()

    flow.finish("two instances, 3 users on 5 sockets (Bob's web client back on the other instance): search by "
                "username, request + accept, friend lists, chat, block (1119 over WS and REST), unblock, friends "
                "again, a stranger chats then is refused under --direct-messages friends (1120), account deletion "
                f"(session_ended deleted, 4501, login 1048); {len(checked)} deliveries each once on the socket meant "
                "for them, the 3 missed ones once through sync after a reconnect to the other instance")


asyncio.run(main())

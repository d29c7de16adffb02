"""Seed 002: the RTM-based SwiftUI IM of the "千亿级IM独立开发指南" series (IMCenter).

Its order of calls: log in and open the connection; chat messages (RTM messageType 30) and group "cmd" notices
(`sendGroupCmdMessageChat`: shown but not chat, `isChat = false`); on opening a dialogue,
`prepareDialogueMesssageInfos` loads the local messages and `refillHistoryMessage` pulls history newest first,
10 at a time (`getP2PHistoryMessageChat(withUserId:, desc: true, num: 10, begin:, end:, lastid:)`, likewise for
groups), inserting each message into the local store and stopping at the first one it already has (the gap is
filled), or when no more exist; messages are then sorted by `mtime`, then `mid`. Senders it does not know are
looked up (`getUserOpenInfo`, at most 99 ids a call). Rooms (`enterRoom`, `sendRoomCmdMessageChat`) are issue 22's
and are left out here; RTM's numeric uids are Parley's string user ids.
"""
import asyncio
import json
import uuid

import wire
from client import Device, Flow, check, decoded, http, ok, password_login, query, register

flow = Flow("002")

# RTM's history answer, on Parley's names: a page of messages (newest first when desc) and whether more exist.
HistoryPage = wire.Struct("HistoryPage", messages=wire.Array(wire.ANY), hasMore=wire.BOOL)
Seq = wire.Struct("Seq", seq=wire.INT64)


class IMCenter:
    """One client: its token, its local message store (by mid) and fakeMid for messages shown before the ack."""

    def __init__(self, session):
        self.session, self.token = session, session["accessToken"]
        self.db, self.fake_mid = {}, 1

    def history(self, cid, desc=True, num=10, begin=None, end=None, lastid=None):
        """get{P2P,Group}HistoryMessageChat(desc:, num:, begin:, end:, lastid:) -> RTM messages."""
        params = {"limit": num, "order": "desc" if desc else "asc", "begin": begin, "end": end, "before": lastid}
        page = ok(http("GET", query(f"/api/im/conversations/{cid}/messages", **params), token=self.token),
                  HistoryPage, "getHistoryMessageChat")
        messages = []
        for raw in page["messages"]:
            message = decoded(wire.ImMessage, raw, "a history message") | decoded(Seq, raw, "seq")
            # RTMHistoryMessage: fromUid, messageId, modifiedTime (ms), stringMessage, messageType (30 = chat).
            messages.append({"fromUid": message["fromId"], "messageId": int(message["id"]), "seq": message["seq"],
                             "modifiedTime": message["editedAt"] or wire.epoch_ms(message["createdAt"]),
                             "stringMessage": message["content"], "isChat": message["msgType"] == "text"})
        return messages, page["hasMore"]

    def refill(self, cid):
        """refillHistoryMessage: newest first by 10 until a stored message (or the end) is reached."""
        # RTM's first call: begin 0, end 0, lastid 0 (no bounds, as Parley reads 0 for before and end).
        inserted, lastid, calls = [], 0, 0
        while calls < 100:
            calls += 1
            messages, has_more = self.history(cid, desc=True, num=10, begin=0, end=0, lastid=lastid)
            if [m["seq"] for m in messages] != sorted((m["seq"] for m in messages), reverse=True):
                raise SystemExit(f"FAILED: desc history is not newest first: {[m['seq'] for m in messages]}")
            gap_filled = False
            for message in messages:
                if message["messageId"] in self.db:  # insertChatMessage failed: already stored
                    gap_filled = True
                    break
                self.db[message["messageId"]] = message
                inserted.append(message)
            if gap_filled or not has_more or not messages:
                return inserted, calls
            lastid = messages[-1]["seq"]
        raise SystemExit("FAILED: refillHistoryMessage did not end within 100 pages")

    def dialogue(self):
        """soreChatMessages: by mtime, then mid."""
        return sorted(self.db.values(), key=lambda m: (m["modifiedTime"], m["messageId"]))


async def send_chat(device, center, to, text, chat_type="single"):
    """A chat message, shown at once under a fakeMid (kept as the clientMsgId) and stored under the server's id."""
    fake = center.fake_mid
    center.fake_mid += 1
    ack = await device.request("send", {"toId": to, "chatType": chat_type, "msgType": "text", "content": text,
                                        "clientMsgId": f"fake-{fake}-{uuid.uuid4().hex[:8]}"})
    return decoded(wire.ImMessage, ack, "sendChat ack") | decoded(Seq, ack, "seq")


async def main():
    with flow.step("log in, connect"):
        sessions = {}
        for name in ("rtm_alice", "rtm_bob", "rtm_carol"):
            ok(register(name, nickname=name.split("_")[1].title()), wire.PasswordLogin, f"register {name}")
            sessions[name] = ok(password_login(name), wire.PasswordLogin, f"login {name}")
        alice, bob, carol = (IMCenter(sessions[n]) for n in ("rtm_alice", "rtm_bob", "rtm_carol"))
        ids = {n: sessions[n]["user"]["id"] for n in sessions}
        alice_ws = await Device("alice", sessions["rtm_alice"]["imToken"]).connect()
        bob_ws = await Device("bob", sessions["rtm_bob"]["imToken"]).connect()
        p2p = "si:" + ":".join(sorted([ids["rtm_alice"], ids["rtm_bob"]]))

    with flow.step("25 chat messages; refillHistoryMessage pages newest first by 10 into an empty store"):
        sent = []
        for n in range(25):
            sent.append(await send_chat(alice_ws, alice, ids["rtm_bob"], f"消息 {n}"))
        await bob_ws.event("message", id=sent[-1]["id"])
        inserted, calls = bob.refill(p2p)
        check(len(inserted) == 25 and calls == 3, f"refill took {calls} calls for {len(inserted)} messages")
        check([m["messageId"] for m in bob.dialogue()] == [int(m["id"]) for m in sent], "dialogue order")
        check(all(m["isChat"] and m["fromUid"] == ids["rtm_alice"] for m in inserted), "messageType 30 from alice")

    with flow.step("refill after new messages stops at the first stored one"):
        for n in range(3):
            sent.append(await send_chat(alice_ws, alice, ids["rtm_bob"], f"新消息 {n}"))
        inserted, calls = bob.refill(p2p)
        check([m["messageId"] for m in inserted] == [int(m["id"]) for m in reversed(sent[-3:])] and calls == 1,
              f"second refill inserted {[m['messageId'] for m in inserted]} in {calls} calls")

    with flow.step("a begin/end window (epoch ms), desc, paged by lastid"):
        times = [wire.epoch_ms(m["createdAt"]) for m in sent]
        begin, end = times[5], times[19]
        expected = [int(m["id"]) for m, t in zip(sent, times) if begin <= t <= end]
        got, lastid = [], 0
        for _ in range(10):
            messages, has_more = alice.history(p2p, desc=True, num=10, begin=begin, end=end, lastid=lastid)
            got += [m["messageId"] for m in messages]
            if not has_more:
                break
            lastid = messages[-1]["seq"]
        check(got == list(reversed(expected)), f"window [{begin}, {end}]: {len(got)} messages vs {len(expected)}")
        # Ascending (desc: false) from the window's start.
        messages, _ = alice.history(p2p, desc=False, num=10, begin=begin, end=end)
        check([m["messageId"] for m in messages] == expected[:10], "ascending window")

    with flow.step("group: chat and cmd notices; group history newest first; unknown senders looked up"):
        group = ok(http("POST", "/api/im/groups", {"name": "RTM 群", "memberIds": [ids["rtm_bob"], ids["rtm_carol"]]},
                        token=alice.token), wire.Struct("Group", groupId=wire.STRING), "create group")
        gid = group["groupId"]
        carol_ws = await Device("carol", sessions["rtm_carol"]["imToken"]).connect()
        chat = await send_chat(carol_ws, carol, gid, "大家好", chat_type="group")
        # sendGroupCmd: a system notice shown in the dialogue but not a chat message.
        cmd = await carol_ws.request("send", {"toId": gid, "chatType": "group", "msgType": "custom",
                                              "content": json.dumps({"cmd": "Carol 修改了群名片"}),
                                              "clientMsgId": str(uuid.uuid4())})
        cmd = decoded(wire.ImMessage, cmd, "sendGroupCmd ack")
        await bob_ws.event("message", id=cmd["id"])
        inserted, _ = bob.refill(f"sg:{gid}")
        by_id = {m["messageId"]: m for m in inserted}
        check(by_id[int(chat["id"])]["isChat"] and not by_id[int(cmd["id"])]["isChat"], "chat vs cmd")
        check(json.loads(by_id[int(cmd["id"])]["stringMessage"]) == {"cmd": "Carol 修改了群名片"}, "cmd text")
        unknown = sorted({m["fromUid"] for m in inserted if m["fromUid"] != ids["rtm_bob"]})
        users = ok(http("POST", "/api/users/lookup", {"ids": unknown[:99]}, token=bob.token), wire.Lookup,
                   "getUserOpenInfo")
        check({u["id"]: u["nickname"] for u in users["users"]}.get(ids["rtm_carol"]) == "Carol", f"lookup {users}")

    with flow.step("disconnect"):
        for device in (alice_ws, bob_ws, carol_ws):
            await device.close()

    flow.finish("28 chat messages; refill newest first by 10 (3 calls, then 1 stopping at a stored message); a "
                "begin/end window paged desc and read asc; group chat + cmd notice told apart; senders looked up")


asyncio.run(main())

"""Issue 20's admin API for messages and groups, driven as an app's backend drives it (scripts/e2e/98-admin-messages.sh):
seed 000's backend sends its custom `account_conflict` notice to a user with a live socket (it arrives, decodes as
seed 001's `ImMessage`, and its content is the JSON text seed 000's client filters on), the same notice through the
history seed 000 loads; a broadcast to 1,000 users that exist (signed logins create them); a group made by the admin
API with a timed mute and mute-all refusing then allowing.
"""
import asyncio
import json
import time

import wire
from client import APP_KEY, Device, Flow, check, http, ok, refused, signed

flow = Flow("admin")


def signed_login(user_id):
    answer = signed("POST", "/api/im/auth/login", {"appKey": APP_KEY, "userId": user_id})
    return ok(answer, wire.LoginResponse, f"signed login {user_id}")["token"]


def send_group(token, group_id, text):
    return http("POST", "/api/im/messages", {"toId": group_id, "chatType": "group", "msgType": "text",
                                              "content": text}, token=token)


async def main():
    notice = {"type": "account_conflict", "device_model": "iPhone 15 Pro", "text": "您的账号在另一台设备登录，如非本人请修改密码。"}

    with flow.step("account_conflict notice from the system, live"):
        token = signed_login("tb_conflicted")
        device = await Device("conflicted", token).connect()
        answer = signed("POST", "/api/admin/messages", {"toId": "tb_conflicted", "chatType": "single",
                                                        "msgType": "custom", "content": notice})
        sent = ok(answer, wire.ImMessage, "the backend's account_conflict notice", status=(201,))
        conversation = answer.body["data"]["conversationId"]
        live = await device.event("message", "the notice on the socket", id=sent["id"])
        message = wire.decode(wire.ImMessage, live, "the notice frame (seed 001's ImMessage)")
        check(message["fromId"] == "system" and message["msgType"] == "custom", f"notice: {message}")
        # Seed 000's IMAdapter: contentType custom, customElem.data parsed as JSON, `type` == account_conflict.
        data = json.loads(message["content"])
        check(data == notice, f"the notice's content as the client parses it: {data}")

    with flow.step("the notice in history and an online-only one live only"):
        page = ok(http("GET", f"/api/im/conversations/{conversation}/messages?limit=20", token=token),
                  wire.MessagePage, "history with the system")
        check([m["id"] for m in page["messages"]] == [sent["id"]], f"history: {page}")
        online = ok(signed("POST", "/api/admin/messages", {"toId": "tb_conflicted", "chatType": "single",
                                                           "msgType": "custom", "content": {"type": "ping"},
                                                           "options": {"onlineOnly": True}}),
                    wire.ImMessage, "an online-only message", status=(202,))
        frame = await device.event("message", "the online-only message", id=online["id"])
        check(frame["seq"] == 0, f"online-only seq: {frame}")
        page = ok(http("GET", f"/api/im/conversations/{conversation}/messages?limit=20", token=token),
                  wire.MessagePage, "history after the online-only message")
        check(len(page["messages"]) == 1, f"the online-only message was stored: {page}")
        await device.close()

    with flow.step("broadcast to 1,000 users"):
        users = [f"bc_{n:04d}" for n in range(1000)]
        started = time.monotonic()
        for user in users:
            signed_login(user)
        logins = time.monotonic() - started
        started = time.monotonic()
        answer = ok(signed("POST", "/api/admin/messages/broadcast",
                           {"userIds": users, "msgType": "custom", "content": notice, "options": {"noPush": True}}),
                    wire.ANY, "the broadcast")
        took = time.monotonic() - started
        check(answer["sent"] == 1000 and answer["failed"] == 0, f"broadcast: sent {answer['sent']}")
        check(all(r["status"] == "sent" for r in answer["results"]), "a recipient was not sent to")
        some = signed_login("bc_0421")
        listed = ok(http("GET", "/api/im/conversations", token=some), wire.ANY, "bc_0421's conversations")
        check(any(c["conversationId"].startswith("si:") and c.get("unreadCount") == 1
                  for c in listed["conversations"]), f"bc_0421 has the broadcast: {listed}")
        refused(signed("POST", "/api/admin/messages/broadcast",
                       {"userIds": users + ["one_more"], "msgType": "custom", "content": notice}),
                "1,001 recipients", code=1002)
        print(f"  1,000 signed logins in {logins:.1f}s; the broadcast in {took * 1000:.0f} ms", flush=True)

    with flow.step("a group by the admin API, a timed mute and mute-all"):
        owner, member = signed_login("g_owner"), signed_login("g_member")
        group = ok(signed("POST", "/api/admin/groups", {"ownerId": "g_owner", "name": "Admin group",
                                                        "members": ["g_member"], "groupId": "admin_room"}),
                   wire.ANY, "admin group create", status=(201,))
        check(group["groupId"] == "admin_room" and group["memberCount"] == 2, f"group: {group}")
        until = int((time.time() + 3600) * 1000)
        ok(signed("POST", "/api/admin/groups/admin_room/members/g_member/mute", {"until": until}), wire.ANY, "mute")
        refused(send_group(member, "admin_room", "muted?"), "a muted member's send", code=1130)
        ok(send_group(owner, "admin_room", "the owner speaks"), wire.ImMessage, "the owner's send")
        # A mute whose time has passed lets the member speak again.
        ok(signed("POST", "/api/admin/groups/admin_room/members/g_member/mute", {"until": int(time.time() * 1000) - 1}),
           wire.ANY, "mute into the past")
        ok(send_group(member, "admin_room", "back"), wire.ImMessage, "the member's send after the mute")
        ok(signed("POST", "/api/admin/groups/admin_room/mute-all", {"muted": True}), wire.ANY, "mute all")
        refused(send_group(member, "admin_room", "all muted?"), "a member's send in a muted group", code=1131)
        ok(send_group(owner, "admin_room", "owner in a muted group"), wire.ImMessage, "the owner's send, muted all")
        ok(signed("POST", "/api/admin/groups/admin_room/mute-all", {"muted": False}), wire.ANY, "unmute all")
        ok(send_group(member, "admin_room", "free again"), wire.ImMessage, "the member's send after unmute all")
        history = ok(http("GET", "/api/im/conversations/sg:admin_room/messages?limit=50", token=member),
                     wire.MessagePage, "the group's history")
        events = [json.loads(m["content"]).get("event") for m in history["messages"] if m["msgType"] == "notify"]
        for event in ("group_created", "member_muted", "group_muted", "group_unmuted"):
            check(event in events, f"{event} notice missing: {events}")

    flow.finish("system account_conflict notice live + history as seeds 000/001 decode it; online-only not stored; "
                "broadcast to 1,000 users; admin group with a timed mute and mute-all refusing then allowing")


asyncio.run(main())

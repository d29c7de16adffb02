"""Issue 22's groups that communities run, driven over the wire (scripts/e2e/94-groups.sh): a group with an
announcement (the members' sockets get the `group_updated` notice), mute-all and a timed member mute set by an admin
through the user routes (each refuses with its own code, then allows), and a join by approval: found by name, asked,
the admins told, accepted, the requester told and the members shown `member_joined`.
"""
import asyncio
import json
import time

import wire
from client import APP_KEY, Device, Flow, check, http, ok, refused, signed

flow = Flow("groups")


def signed_login(user_id):
    answer = signed("POST", "/api/im/auth/login", {"appKey": APP_KEY, "userId": user_id})
    return ok(answer, wire.LoginResponse, f"signed login {user_id}")["token"]


def send_group(token, group_id, text):
    return http("POST", "/api/im/messages", {"toId": group_id, "chatType": "group", "msgType": "text",
                                              "content": text}, token=token)


def notice(frame_data):
    return json.loads(frame_data["content"]) if frame_data.get("msgType") == "notify" else {}


async def notified(device, event, what):
    """The next `message` frame on `device` that is the notify message `event`; its content."""
    frame = await device.next(lambda f: f.get("type") == "message" and notice(f.get("data") or {}).get("event") == event,
                              what)
    return notice(frame["data"])


async def main():
    owner, admin, member, asker = (signed_login(name) for name in ("g_owner", "g_admin", "g_member", "g_asker"))
    admin_device = await Device("admin", admin).connect()
    member_device = await Device("member", member).connect()
    asker_device = await Device("asker", asker).connect()

    with flow.step("a group with an announcement"):
        group = ok(http("POST", "/api/im/groups", {"name": "Harbour Rowing Club", "memberIds": ["g_admin", "g_member"]},
                        token=owner), wire.ANY, "create the group", status=(201,))
        group_id = group["groupId"]
        ok(http("PATCH", f"/api/im/groups/{group_id}/members/g_admin", {"role": "admin"}, token=owner), wire.ANY,
           "make g_admin an admin")
        updated = ok(http("PATCH", f"/api/im/groups/{group_id}",
                          {"announcement": "Regatta on Saturday", "introduction": "We row at dawn",
                           "ex": {"boats": 4}}, token=admin), wire.ANY, "set the announcement")
        check(updated["announcement"] == "Regatta on Saturday" and updated["ex"] == {"boats": 4}, f"group: {updated}")
        shown = await notified(member_device, "group_updated", "the member's group_updated notice")
        check(shown.get("announcement") == "Regatta on Saturday" and shown.get("operatorId") == "g_admin",
              f"group_updated: {shown}")
        refused(http("PATCH", f"/api/im/groups/{group_id}", {"announcement": "mine"}, token=member),
                "a plain member's announcement", code=1112)
        mine = ok(http("GET", "/api/im/groups?limit=10", token=member), wire.ANY, "the member's groups")
        check([g["groupId"] for g in mine["groups"]] == [group_id], f"my groups: {mine}")

    with flow.step("mute all: members refused with 1131, admins speak, then allowed"):
        ok(http("POST", f"/api/im/groups/{group_id}/mute-all", {"muted": True}, token=admin), wire.ANY, "mute all")
        await notified(member_device, "group_muted", "group_muted")
        refused(send_group(member, group_id, "anyone?"), "a member's send, muted all", code=1131)
        ok(send_group(admin, group_id, "admins still speak"), wire.ImMessage, "the admin's send, muted all")
        ok(http("POST", f"/api/im/groups/{group_id}/mute-all", {"muted": False}, token=admin), wire.ANY, "unmute all")
        await notified(member_device, "group_unmuted", "group_unmuted")
        ok(send_group(member, group_id, "free again"), wire.ImMessage, "the member's send after mute all")

    with flow.step("a timed member mute: refused with 1130 until it ends"):
        until = int(time.time() * 1000) + 3_600_000
        ok(http("POST", f"/api/im/groups/{group_id}/members/g_member/mute", {"until": until}, token=admin), wire.ANY,
           "mute the member for an hour")
        muted = await notified(member_device, "member_muted", "member_muted")
        check(muted.get("userId") == "g_member" and muted.get("until") == until, f"member_muted: {muted}")
        refused(send_group(member, group_id, "muted?"), "a muted member's send", code=1130)
        refused(http("POST", f"/api/im/groups/{group_id}/members/g_owner/mute", {"until": until}, token=admin),
                "an admin muting the owner", code=1112)
        ok(http("POST", f"/api/im/groups/{group_id}/members/g_member/mute", {"until": int(time.time() * 1000) - 1},
                token=admin), wire.ANY, "a mute into the past")
        ok(send_group(member, group_id, "back"), wire.ImMessage, "the member's send after the mute ended")

    with flow.step("join by approval"):
        refused(http("POST", f"/api/im/groups/{group_id}/join", token=asker), "joining an invitation-only group",
                code=1137)
        ok(http("PATCH", f"/api/im/groups/{group_id}", {"joinPolicy": "approval"}, token=owner), wire.ANY,
           "the approval policy")
        found = ok(http("GET", "/api/im/groups/search?q=harbour", token=asker), wire.ANY, "search by name")
        check([g["groupId"] for g in found["groups"]] == [group_id], f"search: {found}")
        asked = ok(http("POST", f"/api/im/groups/{group_id}/join", {"message": "I can steer"}, token=asker), wire.ANY,
                   "ask to join")
        check(asked["joined"] is False and asked["request"]["status"] == "pending", f"join: {asked}")
        refused(send_group(asker, group_id, "hello?"), "the requester's send before acceptance", code=1100)
        told = await admin_device.event("group_join_request", "the admins told of the request", userId="g_asker")
        check(told["message"] == "I can steer" and told["groupId"] == group_id, f"group_join_request: {told}")
        listed = ok(http("GET", f"/api/im/groups/{group_id}/join-requests", token=admin), wire.ANY, "pending requests")
        check([r["userId"] for r in listed["requests"]] == ["g_asker"], f"requests: {listed}")
        accepted = ok(http("POST", f"/api/im/groups/{group_id}/join-requests/g_asker/accept", token=admin), wire.ANY,
                      "accept the request")
        check(accepted["status"] == "accepted", f"accepted: {accepted}")
        verdict = await asker_device.event("group_join_request_handled", "the requester told", status="accepted")
        check(verdict["operatorId"] == "g_admin", f"group_join_request_handled: {verdict}")
        joined = await notified(member_device, "member_joined", "the members shown member_joined")
        check(joined.get("userId") == "g_asker", f"member_joined: {joined}")
        ok(send_group(asker, group_id, "thanks, crew"), wire.ImMessage, "the new member's send")
        refused(http("POST", f"/api/im/groups/{group_id}/join-requests/g_asker/reject", token=owner),
                "rejecting an accepted request", code=1140)

    for device in (admin_device, member_device, asker_device):
        await device.close()
    flow.finish("group with announcement (group_updated live), mute-all 1131 and a timed mute 1130 refusing then "
                "allowing, join by approval (request, admins told, accepted, member_joined)")


asyncio.run(main())

"""Issue 22's replies, reactions, pins and @mentions, driven over the wire (scripts/e2e/91-interactions.sh) on two
`parley serve` instances sharing one database: Alice on the first, Bob on the second. A reply (with its quote), a
reaction and a pin are each seen by the other member live, and by Bob's second device through `sync`; an @mention
reaches a member who muted the group through an offline push (the mock APNs), where a plain message does not.
"""
import asyncio

import wire
from client import (APP_KEY, OTHER_BASE, Device, Flow, apns_requests, apns_token, check, decoded, eventually, http,
                    ok, push_outbox_empty, signed)

flow = Flow("interactions")


def signed_login(user_id):
    answer = signed("POST", "/api/im/auth/login", {"appKey": APP_KEY, "userId": user_id})
    return ok(answer, wire.LoginResponse, f"signed login {user_id}")["token"]


def send(token, to_id, text, chat_type="single", **extra):
    """The stored message, whole (seed 001's `ImMessage` must decode it; `reply` and `mentions` go beyond it)."""
    body = {"toId": to_id, "chatType": chat_type, "msgType": "text", "content": text, **extra}
    message = ok(http("POST", "/api/im/messages", body, token=token), wire.ANY, f"send {text!r}", status=(201,))
    decoded(wire.ImMessage, message, f"the stored {text!r}")
    return message


async def main():
    alice, bob, carol = (signed_login(name) for name in ("i_alice", "i_bob", "i_carol"))
    alice_device = await Device("alice", alice).connect()
    bob_device = await Device("bob", bob, base=OTHER_BASE).connect()
    start = ok(http("GET", "/api/im/sync", token=bob), wire.ANY, "bob's sync cursor")["cursor"]

    with flow.step("a reply quotes the message it answers, live on the other instance"):
        question = send(bob, "i_alice", "Tea at five?")
        await alice_device.event("message", "alice's copy of the question", id=question["id"])
        answer = send(alice, "i_bob", "Yes, at the boathouse", replyTo=question["id"])
        quote = answer.get("reply") or {}
        check(quote.get("msgId") == question["id"] and quote.get("text") == "Tea at five?"
              and quote.get("fromId") == "i_bob" and quote.get("revoked") is False, f"the answer's reply: {answer}")
        live = await bob_device.event("message", "bob's copy of the reply", id=answer["id"])
        check(live.get("reply") == quote, f"the reply bob got live: {live}")

    with flow.step("a reaction reaches the other member live, with the message's counts"):
        reacted = ok(http("PUT", f"/api/im/messages/{answer['id']}/reactions/%F0%9F%91%8D", token=bob), wire.ANY,
                     "bob reacts")
        check(reacted["reactions"] == [{"emoji": "👍", "count": 1, "me": True}], f"reaction: {reacted}")
        seen = await alice_device.event("reaction", "alice sees bob's reaction", msgId=answer["id"])
        check(seen["userId"] == "i_bob" and seen["action"] == "added" and seen["reactions"] == [
            {"emoji": "👍", "count": 1}], f"reaction event: {seen}")
        history = ok(http("GET", f"/api/im/conversations/{answer['conversationId']}/messages", token=alice), wire.ANY,
                     "alice's history")
        shown = next(m for m in history["messages"] if m["id"] == answer["id"])
        check(shown["reactions"] == [{"emoji": "👍", "count": 1, "me": False}], f"history: {shown}")

    with flow.step("a pin reaches the other member live, and the pins list shows it"):
        pinned = ok(http("PUT", f"/api/im/messages/{question['id']}/pin", token=alice), wire.ANY, "alice pins")
        check(pinned["pinned"] is True and pinned["pinnedBy"] == "i_alice", f"pin: {pinned}")
        seen = await bob_device.event("message_pinned", "bob sees the pin", msgId=question["id"])
        check(seen["operatorId"] == "i_alice", f"message_pinned: {seen}")
        pins = ok(http("GET", f"/api/im/conversations/{question['conversationId']}/pins", token=bob), wire.ANY,
                  "bob's pins list")
        check([p["message"]["id"] for p in pins["pins"]] == [question["id"]], f"pins: {pins}")

    with flow.step("bob's second device finds the reply, the reaction and the pin through sync"):
        web = await Device("bob-web", signed_login("i_bob")).connect()
        changes = []
        for _ in range(50):
            page = await web.request("sync", {"cursor": start})
            changes += page["changes"]
            start = page["cursor"]
            kinds = {c["type"] for c in changes}
            if {"reaction", "message_pinned"} <= kinds and any(
                    c["type"] == "message" and c["message"]["id"] == answer["id"] for c in changes):
                break
            await asyncio.sleep(0.1)
        replied = [c["message"] for c in changes if c["type"] == "message" and c["message"]["id"] == answer["id"]]
        check(len(replied) == 1 and replied[0]["reply"]["msgId"] == question["id"], f"synced reply: {replied}")
        check([c["emoji"] for c in changes if c["type"] == "reaction"] == ["👍"], f"synced reactions: {changes}")
        check([c["msgId"] for c in changes if c["type"] == "message_pinned"] == [question["id"]],
              f"synced pins: {changes}")
        await web.close()

    with flow.step("an @mention is pushed through a muted conversation"):
        token = apns_token()
        ok(http("POST", "/api/push/tokens", {"token": token, "vendor": "apns"}, token=carol), wire.ANY,
           "carol binds her phone")
        group = ok(http("POST", "/api/im/groups", {"name": "Crew", "memberIds": ["i_bob", "i_carol"]}, token=alice),
                   wire.ANY, "alice's group", status=(201,))
        ok(http("PATCH", f"/api/im/conversations/{group['conversationId']}", {"muted": True}, token=carol), wire.ANY,
           "carol mutes the group")
        send(bob, group["groupId"], "plain news", chat_type="group")
        mention = send(bob, group["groupId"], "@carol your oar", chat_type="group",
                       mentions={"userIds": ["i_carol"]})
        check(mention.get("mentions") == {"userIds": ["i_carol"], "all": False}, f"mentions: {mention}")
        await push_outbox_empty()
        pushed = await eventually(lambda: apns_requests(token), "the mention's push to carol")
        bodies = [(r.get("payload") or {}).get("aps", {}).get("alert", {}).get("body", "") for r in pushed]
        check(len(pushed) == 1 and bodies[0].endswith("@carol your oar") and pushed[0]["status"] == 200,
              f"carol's pushes: {pushed}")
        summary = ok(http("GET", f"/api/im/conversations/{group['conversationId']}", token=carol), wire.ANY,
                     "carol's summary")
        check(summary["mentioned"] is True and summary["mentionMsgId"] == mention["id"] and summary["muted"] is True,
              f"summary: {summary}")

    await alice_device.close()
    await bob_device.close()
    flow.finish("interactions: a reply, a reaction and a pin seen live across instances and through sync; "
                "an @mention pushed through a mute")


asyncio.run(main())

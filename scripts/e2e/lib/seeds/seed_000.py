"""Seed 000: the 同伴 App, a Swift client built on OpenIM whose own backend signs IM logins.

Its order of calls: the backend signs the IM login for business uid 12345 as IM user `tb_12345` (platform iOS,
the device's Accept-Language forwarded) and the app logs in with that one token (`IMAdapter.login(uid:, token:)`),
then `PushManager.bindPushToken(uid:)` posts `/user/device/push-token {uid, token, type: "apns"}` with the business
uid; `sendText` / `sendCustom(payload:)` (custom data is a JSON string: image {type, object_key, width, height,
url_expire_at}, multi_image {type, object_keys, count}, audio {type, object_key, duration_sec}, flash_image,
signal_quote); `getConversationList` mapped into IMConversationSummary (preview parsed from the latest message's
custom `type`), `onConversationChanged`, `getMessageHistory(count: 40, startMsg:)`, per-message isRead,
`pinConversation`, `setDraft`, `revokeMessage(conversationID:, clientMsgID:)`, `clearHistory`,
`deleteConversation`; `onUserTokenExpired` -> `silentRefreshImToken()` (a new signed login, same device);
`handleAccountConflict(json)` reading `device_model` and `text`; APNs alerts whose `ext` is a dictionary
(`type: "chat"`, `conversation_id`) with the badge; `unbindPushToken()` and logout.
"""
import asyncio
import json
import re
import uuid

import wire
from client import (done, APP_KEY, Device, Flow, apns_requests, apns_token, check, decoded, download, eventually, http,
                    multipart, ok, png, query, refused, signed)

flow = Flow("000")
ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}
CJK = re.compile(r"[\u4e00-\u9fff]")


def backend_login(uid, device_id, model, headers=ZH):
    """The app's backend: signed POST /api/im/auth/login for the prefixed IM user, on the device's behalf."""
    prefixed = uid if uid.startswith("tb_") else f"tb_{uid}"
    answer = signed("POST", "/api/im/auth/login", {"appKey": APP_KEY, "userId": prefixed, "platform": "ios",
                                                   "deviceId": device_id, "deviceModel": model}, headers=headers)
    session = ok(answer, wire.SignedLogin, f"signed login {prefixed}")
    check(session["user"]["id"] == prefixed, f"logged in as {session['user']['id']}, not {prefixed}")
    return session


def conversation_id(a, b):
    return "si:" + ":".join(sorted([a, b]))


def parse_preview(message):
    """IMAdapter.parsePreview on the latest message (Parley's ImMessage instead of OIMMessageInfo)."""
    if message is None:
        return ""
    if message["revoked"]:
        return "消息已撤回"
    if message["msgType"] == "text":
        return message["content"].strip()
    if message["msgType"] == "custom":
        try:
            document = json.loads(message["content"])
        except ValueError:
            return "[消息]"
        kind = document.get("type") if isinstance(document, dict) else None
        return {"image": "[图片]", "flash_image": "[闪照]", "multi_image": "[图片]", "audio": "[语音]",
                "signal_quote": "[信号回复]"}.get(kind, "[消息]") if isinstance(kind, str) else "[消息]"
    return ""


def map_conversation(info):
    """IMAdapter.mapConversation -> IMConversationSummary (lastMessageTime: Int, epoch ms, as Parley sends it)."""
    return {"conversationId": info["conversationId"], "userId": info["peerUserId"], "showName": info["showName"],
            "faceURL": info["faceURL"], "isPinned": info["isPinned"],
            "draftText": info["draftText"] if info["draftText"] else None, "unreadCount": info["unreadCount"],
            "lastMessagePreview": parse_preview(info["latestMessage"]),
            "lastMessageTime": info["lastMessageTime"] or 0}


def conversation_list(token):
    return ok(http("GET", "/api/im/conversations", token=token), wire.ConversationList, "getConversationList")


def summary(token, cid):
    page = conversation_list(token)
    found = [c for c in page["conversations"] if c["conversationId"] == cid]
    check(found, f"{cid} not in the conversation list")
    return page, found[0]


async def send_custom(device, to, payload):
    """OIMManager.sendCustom(conversationID:, payload:): the data is the payload serialized to a JSON string."""
    data = json.dumps(payload, ensure_ascii=False)
    ack = await device.request("send", {"toId": to, "chatType": "single", "msgType": "custom", "content": data,
                                        "clientMsgId": str(uuid.uuid4())})
    return decoded(wire.ImMessage, ack, f"sendCustom {payload.get('type')}"), decoded(wire.SeqMessage, ack, "seq")


def upload(token, name, content, ctype):
    body, content_type = multipart([("file", name, ctype, content)])
    answer = http("POST", "/api/files", raw_body=body, content_type=content_type, token=token)
    ok(answer, wire.FileUploadResult, f"upload {name}")
    return answer.body["data"]["objectKey"]


async def main():
    me_uid, peer_uid = "12345", "67890"
    me_id, peer_id = "tb_12345", "tb_67890"
    cid = conversation_id(me_id, peer_id)

    with flow.step("backend-signed login: the whole answer, IM user tb_12345 for uid 12345"):
        me = backend_login(me_uid, "device-A", "iPhone 15")
        peer = backend_login(peer_uid, "device-P", "iPhone 14")
        check(me["renewed"] is False, "a first login reported a renewal")

    with flow.step("IMAdapter.login: /ws with the signed login's token"):
        me_ws = await Device("tb_12345", me["token"]).connect()
        peer_ws = await Device("tb_67890", peer["token"]).connect()
        check(me_ws.hello["data"]["userId"] == me_id, f"hello: {me_ws.hello}")

    with flow.step("bindPushToken(uid: business uid) -> POST /user/device/push-token {uid, token, type}"):
        # A uid naming another user never binds that user: accepted, the token goes to the caller (or refused).
        # First, since a session keeps one APNs token and the real binding below replaces it.
        stray = apns_token()
        answer = http("POST", "/user/device/push-token", {"uid": peer_uid, "token": stray, "type": "apns"},
                      token=me["token"])
        if answer.status in (200, 201):
            done(answer, "bind with another user's business uid")
        me_push, peer_push = apns_token(), apns_token()
        for session, uid, push in ((me, me_uid, me_push), (peer, peer_uid, peer_push)):
            done(http("POST", "/user/device/push-token", {"uid": uid, "token": push, "type": "apns"},
                      token=session["token"]), f"bind push token for uid {uid}")

    with flow.step("sendText; the peer's message, and onConversationChanged with unreadCount + latestMessage"):
        text_ack = await me_ws.request("send", {"toId": peer_id, "chatType": "single", "msgType": "text",
                                                "content": "你好", "clientMsgId": str(uuid.uuid4())})
        text = decoded(wire.ImMessage, text_ack, "sendText ack")
        text_seq = decoded(wire.SeqMessage, text_ack, "sendText seq")
        got = decoded(wire.ImMessage, await peer_ws.event("message", id=text["id"]), "onRecvNewMessage")
        check(got["fromId"] == me_id and got["content"] == "你好", f"received {got}")
        changed = decoded(wire.ConversationChanged, await peer_ws.event("conversation", conversationId=cid),
                          "onConversationChanged")
        check(changed["unreadCount"] == 1 and changed["latestMessage"]["id"] == text["id"],
              f"conversation event: {changed}")

    with flow.step("custom messages with object_key / object_keys: recipient signs their URLs"):
        photo, photo2, photo3 = png(16, 8), png(8, 8), png(4, 4)
        # Referenced by nothing: the sweeper removes it (the control for the files the messages keep).
        control = upload(me["token"], "control.png", png(3, 3), "image/png")
        voice = b"#!AMR\n" + bytes(range(256)) * 8
        key = upload(me["token"], "photo.png", photo, "image/png")
        keys = [upload(me["token"], "a.png", photo2, "image/png"), upload(me["token"], "b.png", photo3, "image/png")]
        voice_key = upload(me["token"], "voice.amr", voice, "audio/amr")
        flash_key = upload(me["token"], "flash.png", png(2, 2), "image/png")
        payloads = [
            {"type": "image", "object_key": key, "width": 16, "height": 8, "url_expire_at": 0},
            {"type": "multi_image", "object_keys": keys, "count": 2},
            {"type": "audio", "object_key": voice_key, "duration_sec": 3},
            {"type": "flash_image", "object_key": flash_key, "width": 2, "height": 2},
            {"type": "signal_quote", "signal_id": "s-1", "signal_content": "今晚去吗", "signal_reply": "去"},
        ]
        customs = []
        for payload in payloads:
            message, seq = await send_custom(me_ws, peer_id, payload)
            got = decoded(wire.ImMessage, await peer_ws.event("message", id=message["id"]), "a custom message")
            check(json.loads(got["content"]) == payload, f"parseCustom: {got['content']!r} vs {payload}")
            customs.append((message, seq))
        wanted = [key, *keys, voice_key, flash_key]
        urls = ok(http("POST", "/api/files/urls", {"objectKeys": wanted}, token=peer["token"]), wire.FileURLs,
                  "the recipient's POST /api/files/urls")
        check(not urls["denied"] and sorted(u["objectKey"] for u in urls["urls"]) == sorted(wanted),
              f"denied {urls['denied']}")
        by_key = {u["objectKey"]: u["url"] for u in urls["urls"]}
        check(download(by_key[key]) == photo and download(by_key[voice_key]) == voice, "downloads differ")

    with flow.step("getConversationList: totalUnread, IMConversationSummary with the preview from latestMessage"):
        page, info = summary(peer["token"], cid)
        mapped = map_conversation(info)
        check(mapped["userId"] == me_id and mapped["unreadCount"] == 1 + len(payloads), f"summary: {mapped}")
        check(mapped["lastMessagePreview"] == "[信号回复]", f"preview {mapped['lastMessagePreview']!r}")
        check(mapped["lastMessageTime"] == wire.epoch_ms(customs[-1][0]["createdAt"]), f"time: {mapped}")
        check(page["totalUnread"] == sum(c["unreadCount"] for c in page["conversations"]), f"totalUnread: {page}")

    with flow.step("getMessageHistory(count: 40, startMsg:) and isRead from the peer's read point"):
        history = ok(http("GET", query(f"/api/im/conversations/{cid}/messages", limit=40), token=me["token"]),
                     wire.MessagePage, "getMessageHistory")
        ids = [m["id"] for m in history["messages"]]
        check(ids == [text["id"]] + [m["id"] for m, _ in customs], f"history ids {ids}")
        older = ok(http("GET", query(f"/api/im/conversations/{cid}/messages", limit=40, before=customs[0][1]["seq"]),
                        token=me["token"]), wire.MessagePage, "getMessageHistory(startMsg:)")
        check([m["id"] for m in older["messages"]] == [text["id"]] and older["hasMore"] is False, f"older: {older}")
        done(http("POST", f"/api/im/conversations/{cid}/read", {"seq": customs[1][1]["seq"]}, token=peer["token"]),
             "the peer reads up to the multi_image")
        _, mine = summary(me["token"], cid)
        check(mine["peerReadSeq"] == customs[1][1]["seq"], f"peerReadSeq {mine['peerReadSeq']}")
        is_read = [s["seq"] <= mine["peerReadSeq"] for s in [text_seq] + [s for _, s in customs]]
        check(is_read == [True, True, True, False, False, False], f"isRead {is_read}")

    with flow.step("pinConversation, setDraft"):
        done(http("PATCH", f"/api/im/conversations/{cid}", {"isPinned": True}, token=me["token"]), "pin")
        done(http("PATCH", f"/api/im/conversations/{cid}", {"draftText": "草稿"}, token=me["token"]), "draft")
        page, info = summary(me["token"], cid)
        check(page["conversations"][0]["conversationId"] == cid, "the pinned conversation is not first")
        mapped = map_conversation(info)
        check(mapped["isPinned"] is True and mapped["draftText"] == "草稿", f"pin/draft: {mapped}")

    with flow.step("revokeMessage(conversationID:, clientMsgID:) over WS and REST; GET /api/im/messages/{id}"):
        message, seq = customs[-1]
        revoked = decoded(wire.ImMessage, await me_ws.request("revoke", {"conversationId": cid,
                                                                        "clientMsgId": seq["clientMsgId"]}),
                          "revoke by clientMsgId ack")
        check(revoked["id"] == message["id"] and revoked["revoked"], f"revoked {revoked}")
        await peer_ws.event("revoke", msgId=message["id"])
        message, seq = customs[-2]
        ok(http("POST", "/api/im/messages/revoke", {"conversationId": cid, "clientMsgId": seq["clientMsgId"]},
                token=me["token"]), wire.ImMessage, "REST revoke by clientMsgId")
        fetched = ok(http("GET", f"/api/im/messages/{message['id']}", token=peer["token"]), wire.ImMessage,
                     "GET /api/im/messages/{id}")
        check(fetched["revoked"] is True, f"fetched {fetched}")
        refused(http("POST", "/api/im/messages/revoke", {"conversationId": cid, "clientMsgId": "never-sent"},
                     token=me["token"]), "revoke of an unknown clientMsgId")
        _, info = summary(peer["token"], cid)
        check(map_conversation(info)["lastMessagePreview"] == "消息已撤回", f"preview after revoke: {info}")

    with flow.step("silentRefreshImToken: same session, new token, socket stays open; refresh works"):
        renewed = backend_login(me_uid, "device-A", "iPhone 15")
        check(renewed["sessionId"] == me["sessionId"] and renewed["renewed"] is True,
              f"a new session {renewed['sessionId']} vs {me['sessionId']} (renewed: {renewed['renewed']})")
        check(renewed["token"] != me["token"], "the renewal returned the same token")
        check(await me_ws.still_open(), "the open socket no longer answers")
        check(not me_ws.frames("account_conflict") and not me_ws.frames("session_ended"),
              f"renewal displaced the socket: {me_ws.buffer}")
        refreshed = ok(http("POST", "/api/auth/refresh", {"refreshToken": renewed["refreshToken"]}), wire.Refreshed,
                       "/api/auth/refresh")
        check(refreshed["sessionId"] == me["sessionId"], f"refresh moved the session: {refreshed}")
        done(http("GET", "/api/im/conversations", token=renewed["token"]), "REST with the renewed token")
        me = renewed

    with flow.step("offline alert push: ext dictionary (type chat, conversation_id), badge, content-available"):
        await me_ws.close()
        peer_key = upload(peer["token"], "reply.png", png(6, 6), "image/png")
        pushed = decoded(wire.ImMessage, await peer_ws.request("send", {
            "toId": me_id, "chatType": "single", "msgType": "custom", "clientMsgId": str(uuid.uuid4()),
            "content": json.dumps({"type": "image", "object_key": peer_key, "width": 6, "height": 6})}), "send to me")
        hits = await eventually(lambda: [r for r in apns_requests(me_push)
                                         if isinstance((r.get("payload") or {}).get("ext"), dict)
                                         and r["payload"]["ext"].get("msg_id") == pushed["id"]],
                                "the alert push to tb_12345's token (kept across the renewal)")
        request = hits[0]
        check(request["status"] == 200, f"mock APNs refused: {request}")
        payload = request["payload"]
        ext = payload["ext"]
        check(ext.get("type") == "chat" and ext.get("conversation_id") == cid, f"ext {ext}")
        aps = payload["aps"]
        page = conversation_list(me["token"])
        check(aps.get("badge") == page["totalUnread"] and not isinstance(aps.get("badge"), bool),
              f"badge {aps.get('badge')} vs totalUnread {page['totalUnread']}")
        check(aps.get("content-available") == 1, f"content-available: {aps}")
        body = (aps.get("alert") or {}).get("body", "")
        check("图片" in body and "object_key" not in body, f"zh preview of a custom image: {body!r}")

    with flow.step("account_conflict on another iPhone: device_model and zh text, then 4500"):
        me_ws = await Device("tb_12345", me["token"]).connect()
        me = backend_login(me_uid, "device-B", "iPhone 16 Pro")
        conflict = decoded(wire.AccountConflict, await me_ws.event("account_conflict"), "handleAccountConflict")
        check(conflict["device_model"] == "iPhone 16 Pro", f"device_model {conflict}")
        check(CJK.search(conflict["text"]), f"the text is not in the session's language (zh): {conflict['text']!r}")
        code = await me_ws.closed("after account_conflict")
        check(code == 4500, f"close code {code}")

    with flow.step("the sweeper removes an unreferenced upload but keeps the custom messages' files"):
        await eventually(lambda: control in ok(http("POST", "/api/files/urls", {"objectKeys": [control]},
                                                    token=me["token"]), wire.FileURLs, "control URL")["denied"],
                         "the sweeper to remove the unreferenced upload", timeout=30, interval=0.5)
        # The flash image's message was revoked above: revoking takes its file back (openapi: "revoking the message
        # removes that"), so only the files of the messages still standing must survive the sweep.
        kept = [k for k in wanted if k != flash_key]
        urls = ok(http("POST", "/api/files/urls", {"objectKeys": kept + [flash_key]}, token=peer["token"]),
                  wire.FileURLs, "the custom messages' files after a sweep")
        check(urls["denied"] == [flash_key], f"denied after the sweep: {urls['denied']} (expected the revoked one only)")
        check(sorted(u["objectKey"] for u in urls["urls"]) == sorted(kept), f"kept: {urls['urls']}")
        check(all(download(u["url"]) for u in urls["urls"]), "a referenced file no longer downloads")

    with flow.step("clearHistory, deleteConversation"):
        done(http("POST", f"/api/im/conversations/{cid}/clear", token=peer["token"]), "clearHistory")
        history = ok(http("GET", query(f"/api/im/conversations/{cid}/messages", limit=40), token=peer["token"]),
                     wire.MessagePage, "history after clear")
        check(history["messages"] == [], f"history after clear: {history}")
        done(http("DELETE", f"/api/im/conversations/{cid}", token=peer["token"]), "deleteConversation")
        check(all(c["conversationId"] != cid for c in conversation_list(peer["token"])["conversations"]),
              "the deleted conversation is still listed")

    with flow.step("unbindPushToken, logout"):
        removed = ok(http("POST", "/user/device/push-token/unbind", token=peer["token"]),
                     wire.Struct("Removed", removed=wire.INT), "unbindPushToken")
        check(removed["removed"] >= 1, f"unbind: {removed}")
        done(http("POST", "/api/auth/logout", token=peer["token"]), "logout")
        await peer_ws.closed("after logout")

    flow.finish("signed login tb_12345 for uid 12345 with one token for REST and /ws; push token bound by business "
                "uid; text + 5 custom types (object_key(s) signed for the recipient); conversation event, list with "
                "totalUnread and parsed previews, history, isRead; pin/draft; revoke by clientMsgId (WS, REST); "
                "silent renewal kept the session and socket; alert with badge + content-available + zh preview; "
                "account_conflict device_model/zh text + 4500; clear/delete; unbind, logout")


asyncio.run(main())

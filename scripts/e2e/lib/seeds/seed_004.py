"""Seed 004: an iOS app on Bmob IM (BmobIMSDK).

Its order of calls: `BmobUser signUpInBackground` (username, password) posts the "Login" notification with
`user.objectId`; `connectToServer` = `setupBelongId(userId)`, `setupDeviceToken(token)` (the APNs token with
`<`, `>` and spaces stripped), `connect`. Entering the background disconnects; coming back connects again, and
the SDK fetches what arrived meanwhile (`didGetOfflineMessagesWithIM`), then `allConversationUsersIds` and
`UserService loadUsersWithUserIds` fill in unknown senders. A chat is `BmobIMConversation conversationWithId:
peerUserId conversationType: Single`; `sendMessage` for text, and for images / voice the file is uploaded first
(`BmobFile saveInBackground`) and the message carries it with metadata (width, height / duration).
`didRecieveMessage` shows a message when `message.fromId` is the open conversation's peer. History:
`queryMessagesWithMessage:nil limit:10`, then `queryMessagesWithMessage:<oldest shown> limit:10` until an empty
answer ("没有更多的历史消息"), sorted by time. Unread counts come from the conversation list.
Friends (`friendsWithCompletion`, `addFriendNoticeWithUserId`) are issue 19's and are left out here.
"""
import asyncio
import json
import uuid

import wire
from client import (done, Device, Flow, apns_token, check, decoded, download, http, multipart, ok, password_login, png,
                    query, register)

flow = Flow("004")

# What the Bmob client reads of a conversation: the peer (allConversationUsersIds) and the unread count.
BmobConversation = wire.Struct("BmobConversation", conversationId=wire.STRING, peerUserId=wire.Optional(wire.STRING),
                               unreadCount=wire.INT, lastSeq=wire.INT64)
BmobConversations = wire.Struct("BmobConversations", conversations=wire.Array(BmobConversation), hasMore=wire.BOOL)
# BmobIMMessage: fromId, msgType, content, createdTime / updatedTime (ms, from the ISO dates); seq to page back.
BmobMessage = wire.Struct("BmobMessage", seq=wire.INT64)


def sign_up(username):
    """[user signUpInBackgroundWithBlock:] -> the user's objectId."""
    session = ok(register(username), wire.PasswordLogin, f"signUp {username}")
    return session


def log_in(username):
    return ok(password_login(username), wire.PasswordLogin, f"loginWithUsernameInBackground {username}")


async def connect_to_server(name, session, device_token):
    """setupBelongId + setupDeviceToken + connect."""
    bound = http("POST", "/api/push/tokens", {"token": device_token, "vendor": "apns"}, token=session["accessToken"])
    done(bound, "setupDeviceToken")
    return await Device(name, session["imToken"]).connect()


def upload(session, name, content, ctype):
    body, content_type = multipart([("file", name, ctype, content)])
    answer = http("POST", "/api/files", raw_body=body, content_type=content_type, token=session["accessToken"])
    result = ok(answer, wire.FileUploadResult, f"BmobFile save {name}")
    return answer.body["data"]["objectKey"], result["url"]


async def send(device, to, msg_type, content):
    ack = await device.request("send", {"toId": to, "chatType": "single", "msgType": msg_type, "content": content,
                                        "clientMsgId": str(uuid.uuid4())})
    return decoded(wire.ImMessage, ack, f"sendMessage {msg_type}") | decoded(BmobMessage, ack, "seq")


def query_messages(session, cid, before=None):
    """[conversation queryMessagesWithMessage:msg limit:10]: the 10 before `msg` (nil: the latest 10)."""
    answer = http("GET", query(f"/api/im/conversations/{cid}/messages", limit=10, before=before),
                  token=session["accessToken"])
    page = ok(answer, wire.Struct("Page", messages=wire.Array(wire.ANY), hasMore=wire.BOOL), "queryMessages")
    return [decoded(wire.ImMessage, m, "a history message") | decoded(BmobMessage, m, "seq")
            for m in page["messages"]]


def updated_time(message):
    return message["editedAt"] if message["editedAt"] is not None else wire.epoch_ms(message["createdAt"])


async def main():
    with flow.step("signUp two users, log in again"):
        alice, bob = sign_up("bmob_alice"), sign_up("bmob_bob")
        alice = log_in("bmob_alice")
        alice_id, bob_id = alice["user"]["id"], bob["user"]["id"]
        cid = "si:" + ":".join(sorted([alice_id, bob_id]))

    with flow.step("connectToServer: setupDeviceToken + connect"):
        alice_ws = await connect_to_server("alice", alice, apns_token())
        bob_ws = await connect_to_server("bob", bob, apns_token())
        cursor = (await bob_ws.request("sync"))["cursor"]

    with flow.step("text, image and voice messages; didRecieveMessage from the open conversation's peer"):
        sent = [await send(alice_ws, bob_id, "text", "你好 bob")]
        photo = png(16, 8)
        key, url = upload(alice, "1480000000.png", photo, "image/png")
        check(download(url) == photo, "file.url does not serve the upload")
        # KEY_WIDTH / KEY_HEIGHT: @(image.size.width) / @(image.size.height), a resized UIImage's CGFloat points.
        size = {"width": 640, "height": 853.3333333333334}
        sent.append(await send(alice_ws, bob_id, "image", {"objectKey": key, **size}))
        voice = b"#!AMR\n" + bytes(200)
        voice_key, _ = upload(alice, "1480000001.amr", voice, "audio/amr")
        sent.append(await send(alice_ws, bob_id, "audio", {"objectKey": voice_key, "durationSec": 2}))
        for message in sent:
            got = decoded(wire.ImMessage, await bob_ws.event("message", id=message["id"]), "didRecieveMessage")
            check(got["fromId"] == alice_id, f"message.fromId {got['fromId']} is not the conversation's peer")
        image = json.loads(sent[1]["content"])
        check(image == {"objectKey": key, **size}, f"image content {sent[1]['content']!r}")
        profiles = ok(http("POST", "/api/users/lookup", {"ids": [alice_id]}, token=bob["accessToken"]), wire.Lookup,
                      "loadUserWithUserId")
        check([p["id"] for p in profiles["users"]] == [alice_id], f"lookup {profiles}")

    with flow.step("background (disconnect), messages meanwhile, foreground: offline messages once"):
        await bob_ws.close()
        for n in range(12):
            sent.append(await send(alice_ws, bob_id, "text", f"离线 {n}"))
        bob_ws = await connect_to_server("bob-again", bob, apns_token())
        offline = []
        for _ in range(20):
            page = await bob_ws.request("sync", {"cursor": cursor})
            offline += [decoded(wire.ImMessage, c["message"], "an offline message")["id"] for c in page["changes"]
                        if c.get("type") == "message"]
            cursor = page["cursor"]
            if not page["hasMore"]:
                break
        check(offline == [m["id"] for m in sent], f"offline messages {len(offline)} of {len(sent)}")
        # didGetOfflineMessagesWithIM: allConversationUsersIds -> loadUsersWithUserIds.
        conversations = ok(http("GET", "/api/im/conversations", token=bob["accessToken"]), BmobConversations,
                           "allConversationUsersIds")
        peers = [c["peerUserId"] for c in conversations["conversations"] if c["peerUserId"]]
        check(peers == [alice_id], f"conversation users {peers}")
        users = ok(http("POST", "/api/users/lookup", {"ids": peers}, token=bob["accessToken"]), wire.Lookup,
                   "loadUsersWithUserIds")
        check(users["users"][0]["nickname"] == "bmob_alice", f"user infos {users}")

    with flow.step("loadMessageRecords, loadMoreRecords until the empty answer, sorted by updatedTime"):
        shown = query_messages(bob, cid)
        check([m["id"] for m in shown] == [m["id"] for m in sent[-10:]], "the first 10 are not the latest 10")
        pages = 1
        for _ in range(10):
            more = query_messages(bob, cid, before=shown[0]["seq"])
            if not more:
                break
            pages += 1
            shown = sorted(more + shown, key=lambda m: (updated_time(m), m["seq"]))
        check([m["id"] for m in shown] == [m["id"] for m in sent], f"paged {len(shown)} of {len(sent)} messages")
        check(pages == 2, f"{pages} pages of 10 for {len(sent)} messages")

    with flow.step("unread counts from the conversation list; reading clears them"):
        listed = ok(http("GET", "/api/im/conversations", token=bob["accessToken"]), BmobConversations, "unread")
        check(listed["conversations"][0]["unreadCount"] == len(sent), f"unread {listed['conversations'][0]}")
        done(http("POST", f"/api/im/conversations/{cid}/read", {"seq": listed["conversations"][0]["lastSeq"]},
                token=bob["accessToken"]), "read")
        listed = ok(http("GET", "/api/im/conversations", token=bob["accessToken"]), BmobConversations, "unread")
        check(listed["conversations"][0]["unreadCount"] == 0, f"unread after reading {listed['conversations'][0]}")
        reply = await send(bob_ws, alice_id, "text", "收到")
        await alice_ws.event("message", id=reply["id"])
        mine = ok(http("GET", "/api/im/conversations", token=alice["accessToken"]), BmobConversations, "alice's list")
        check(mine["conversations"][0]["unreadCount"] == 1, f"alice's unread {mine['conversations'][0]}")

    with flow.step("userLogout: disconnect, log out"):
        await bob_ws.close()
        done(http("POST", "/api/auth/logout", token=bob["accessToken"]), "logout")
        await alice_ws.close()

    flow.finish(f"signUp/login, device token + connect; text, image and voice after upload; {len(sent)} messages, "
                "12 of them fetched once after coming back from the background; users looked up; history paged "
                "back by 10 until empty; unread counts and read")


asyncio.run(main())

"""Seed 001: the XuqmGroup iOS SDK (Core / IM / Push / Update / File), Parley's first client.

What the SDK does, in its order: `XuqmSDK.initialize(appKey:, appSecret:)`, then `ApiClient.post(path:
"/api/im/auth/login", body: ["appKey": appKey, "userId": userId])` (signed with the app secret the SDK holds),
decoding `ApiResponse<LoginResponse>` with `LoginResponse { token: String }`; `XuqmSDK.setToken(token)`: from then on
ApiClient "自动附加 Bearer Token" to every REST call and ImClient opens the WebSocket with the same token.
`imClient.send(SendMessageParams(toId:, chatType: .single, msgType: .text, content: "Hello!"))` (no clientMsgId),
`onMessage(_ msg: ImMessage)`, `imClient.revoke(msgId:)` / `onRevoke(msgId:, operatorId:)`;
`PushSDK.registerToken(token, userId:)` (vendor APNS); `UpdateSDK.checkAppUpdate(currentVersionCode: 123)` with
`info.versionName` and `URL(string: info.appStoreUrl)`; `FileSDK.shared.upload(fileURL:, thumbnailData:)` ->
`FileUploadResult` (.url / .thumbnailUrl / .hash / .size / .mimeType / .ext). Every message the SDK sees decodes
into its `ImMessage`. The WebView and license modules have no server side here.
"""
import asyncio
import hashlib
import json

import wire
from client import (done, APP_KEY, Device, Flow, apns_requests, apns_token, check, decoded, download, eventually, http,
                    multipart, ok, png, query, refused, signed)

flow = Flow("001")


def sdk_login(user_id):
    """ApiClient.post(path: "/api/im/auth/login", body: ["appKey": appKey, "userId": userId])."""
    answer = signed("POST", "/api/im/auth/login", {"appKey": APP_KEY, "userId": user_id})
    return ok(answer, wire.LoginResponse, f"ApiClient.post /api/im/auth/login ({user_id})")["token"]


def send_params(to_id, msg_type, content):
    """SendMessageParams(toId:, chatType: .single, msgType:, content:): the SDK has no clientMsgId."""
    return {"toId": to_id, "chatType": "single", "msgType": msg_type, "content": content}


async def main():
    with flow.step("login (signed, ApiResponse<LoginResponse>)"):
        token_1, token_2 = sdk_login("user_001"), sdk_login("user_002")

    with flow.step("ImClient.connect with the SDK's one token"):
        me = await Device("user_001", token_1).connect()
        peer = await Device("user_002", token_2).connect()

    with flow.step("send text without clientMsgId; ack and onMessage decode as ImMessage"):
        ack = await me.request("send", send_params("user_002", "text", "Hello!"))
        sent = decoded(wire.ImMessage, ack, "the send ack")
        got = decoded(wire.ImMessage, await peer.event("message", id=sent["id"]), "onMessage(ImMessage)")
        check(got == sent, f"the peer's ImMessage differs from the ack: {got} vs {sent}")
        check((sent["fromId"], sent["toId"], sent["chatType"], sent["msgType"], sent["content"], sent["revoked"],
               sent["extra"], sent["editedAt"]) == ("user_001", "user_002", "single", "text", "Hello!", False,
                                                    None, None), f"the sent message: {sent}")
        # A second send of the same params is a second message: no clientMsgId, no dedup.
        again = decoded(wire.ImMessage, await me.request("send", send_params("user_002", "text", "Hello!")),
                        "the second send ack")
        check(again["id"] != sent["id"], "two sends without clientMsgId were merged into one message")

    with flow.step("FileSDK.upload (Bearer) -> FileUploadResult; the download matches"):
        image, thumb = png(16, 8), png(4, 2)
        body, ctype = multipart([("file", "photo.png", "image/png", image), ("thumbnail", "t.png", "image/png", thumb)])
        answer = http("POST", "/api/files", raw_body=body, content_type=ctype, token=token_1)
        uploaded = ok(answer, wire.FileUploadResult, "FileSDK.upload")
        check(uploaded["hash"] == hashlib.sha256(image).hexdigest() and uploaded["size"] == len(image),
              f"FileUploadResult hash/size: {uploaded}")
        check(uploaded["mimeType"] == "image/png" and uploaded["ext"] == "png", f"FileUploadResult type: {uploaded}")
        check(uploaded["thumbnailUrl"] is not None and download(uploaded["thumbnailUrl"]) == thumb, "thumbnail")
        check(download(uploaded["url"]) == image, "the downloaded file differs from the upload")
        # The key to reference the file from a message (the answer's objectKey beside the SDK's fields).
        object_key = answer.body["data"]["objectKey"]

    with flow.step("image message with content as a JSON string; ImMessage.content is the JSON text"):
        content = json.dumps({"objectKey": object_key, "width": 16, "height": 8})
        image_msg = decoded(wire.ImMessage, await me.request("send", send_params("user_002", "image", content)),
                            "the image send ack")
        got = decoded(wire.ImMessage, await peer.event("message", id=image_msg["id"]), "onMessage(image)")
        document = json.loads(got["content"])
        check(document.get("objectKey") == object_key and document.get("width") == 16,
              f"image content as text: {got['content']!r}")
        urls = ok(http("POST", "/api/files/urls", {"objectKeys": [object_key]}, token=token_2), wire.FileURLs,
                  "the recipient signs its URL")
        check([u["objectKey"] for u in urls["urls"]] == [object_key] and not urls["denied"], f"urls: {urls}")
        check(download(urls["urls"][0]["url"]) == image, "the recipient's download differs")

    with flow.step("an edit by the peer arrives as ImMessage with editedAt in epoch ms"):
        reply = decoded(wire.ImMessage, await peer.request("send", send_params("user_001", "text", "hi 001")),
                        "the peer's send ack")
        await me.event("message", id=reply["id"])
        edited = ok(http("PATCH", f"/api/im/messages/{reply['id']}", {"content": "hi 001!"}, token=token_2),
                    wire.ImMessage, "edit over REST with the SDK token")
        event = decoded(wire.ImMessage, await me.event("edit", id=reply["id"]), "the edit frame")
        check(event["content"] == "hi 001!" and isinstance(event["editedAt"], int), f"edit frame: {event}")
        check(edited["editedAt"] == event["editedAt"], f"REST {edited['editedAt']} vs WS {event['editedAt']}")
        check(abs(event["editedAt"] - wire.epoch_ms(event["createdAt"])) < 600_000, f"editedAt not in ms: {event}")

    with flow.step("revoke(msgId:) -> ack ImMessage, peer's onRevoke(msgId:, operatorId:)"):
        revoked = decoded(wire.ImMessage, await me.request("revoke", {"msgId": sent["id"]}), "the revoke ack")
        check(revoked["revoked"] is True, f"revoke ack: {revoked}")
        notice = decoded(wire.RevokeEvent, await peer.event("revoke", msgId=sent["id"]), "onRevoke")
        check(notice["operatorId"] == "user_001", f"onRevoke: {notice}")

    with flow.step("history and sync (REST with the SDK token) decode as ImMessage"):
        conversation = "si:user_001:user_002"
        page = ok(http("GET", query(f"/api/im/conversations/{conversation}/messages", limit=50), token=token_1),
                  wire.MessagePage, "history")
        ids = [m["id"] for m in page["messages"]]
        for wanted in (sent["id"], again["id"], image_msg["id"], reply["id"]):
            check(wanted in ids, f"message {wanted} not in the history {ids}")
        by_id = {m["id"]: m for m in page["messages"]}
        check(by_id[sent["id"]]["revoked"] and by_id[reply["id"]]["editedAt"] == event["editedAt"],
              f"history state: {by_id[sent['id']]}, {by_id[reply['id']]}")
        start = ok(http("GET", "/api/im/sync", token=token_2), wire.ANY, "sync start")
        tail = decoded(wire.ImMessage, await me.request("send", send_params("user_002", "text", "after the cursor")),
                       "the last send ack")
        await peer.event("message", id=tail["id"])
        changes = await eventually(lambda: [c for c in ok(http("GET", query("/api/im/sync", cursor=start["cursor"]),
                                                               token=token_2), wire.ANY, "sync")["changes"]
                                            if c.get("type") == "message"], "the synced message")
        for change in changes:
            decoded(wire.ImMessage, change["message"], "a synced message")
        frames = await peer.request("sync", {"cursor": start["cursor"]})
        for change in frames["changes"]:
            if change.get("type") in ("message", "edit"):
                decoded(wire.ImMessage, change["message"], "a message of the WS sync")

    with flow.step("PushSDK.registerToken(token, userId:) with vendor APNS"):
        device_token = apns_token()
        bound = ok(http("POST", "/api/push/tokens", {"token": device_token, "vendor": "APNS", "userId": "user_001"},
                        token=token_1), wire.Struct("PushToken", token=wire.STRING, vendor=wire.STRING),
                   "PushSDK.registerToken")
        check(bound["token"] == device_token and bound["vendor"] == "apns", f"bound: {bound}")
        await me.close()
        offline = decoded(wire.ImMessage, await peer.request("send", send_params("user_001", "text", "while away")),
                          "send to the offline user")
        pushed = await eventually(lambda: [r for r in apns_requests(device_token)
                                           if isinstance((r.get("payload") or {}).get("ext"), dict)
                                           and r["payload"]["ext"].get("msg_id") == offline["id"]],
                                  "the alert push to the registered token")
        check(pushed[0]["status"] == 200, f"the mock APNs refused the push: {pushed[0]}")

    with flow.step("UpdateSDK.checkAppUpdate(currentVersionCode: 123): info.appStoreUrl is a String"):
        def check_update():
            answer = http("GET", query("/api/update/check", platform="ios", versionCode=123),
                          token=token_1, headers={"X-App-Key": APP_KEY})
            return ok(answer, wire.UpdateResult, "checkAppUpdate")
        none = check_update()
        check(none["needsUpdate"] is False and none["info"] is None, f"no release yet: {none}")
        store = "https://apps.apple.com/app/id1234567890"
        ok(signed("POST", "/api/admin/releases", {"platform": "ios", "versionCode": 124, "versionName": "2.4.0",
                                                  "appStoreUrl": store, "releaseNotes": "seed 001"}),
           wire.ANY, "the backend publishes 124")
        result = check_update()
        check(result["needsUpdate"] and result["info"]["versionName"] == "2.4.0"
              and result["info"]["appStoreUrl"] == store, f"update answer: {result}")
        # An iOS build offered only by download URL: refused, or answered with an App Store URL all the same.
        answer = signed("POST", "/api/admin/releases", {"platform": "ios", "versionCode": 125, "versionName": "2.5.0",
                                                        "downloadUrl": "https://example.com/app.ipa"})
        if answer.status in (200, 201):
            result = check_update()
            check(result["info"]["versionName"] == "2.5.0", f"update answer after 125: {result}")
        else:
            refused(answer, "an iOS release without appStoreUrl")

    with flow.step("an ImClient per screen on two devices: every socket of the shared session stays and hears"):
        # The SDK's login names no device, so a second device's login renews the same session; each view controller
        # connects its own ImClient. Six sockets pass the session's probe limit (4): the older ones are pinged, and
        # clients that answer stay (95-seeds.sh gives them PARLEY_WS_PROBE_SECONDS=3 to do it in; the wait outlasts it).
        token_1b = sdk_login("user_001")
        screens = [await Device(f"user_001 screen {i}", token).connect()
                   for i, token in enumerate([token_1, token_1, token_1, token_1b, token_1b, token_1b])]
        check(len({d.hello["data"]["sessionId"] for d in screens}) == 1,
              "the SDK's two logins should share one session (the case this step is about)")
        await asyncio.sleep(4)
        notice = decoded(wire.ImMessage, await peer.request("send", send_params("user_001", "text", "to every screen")),
                         "the send to every screen")
        for device in screens:
            got = decoded(wire.ImMessage, await device.event("message", id=notice["id"]), f"{device.name}: onMessage")
            check(got["content"] == "to every screen", f"{device.name}: {got}")
            check(await device.still_open(), f"{device.name} was closed")
        for device in screens:
            await device.close()

    with flow.step("disconnect"):
        await peer.close()

    flow.finish("login by the signed ApiClient call, one Bearer token for REST and /ws; text without clientMsgId, "
                "image with content as JSON text, edit (editedAt ms), revoke + onRevoke, history and sync all "
                "ImMessage; upload -> FileUploadResult; registerToken -> APNs push; checkAppUpdate with appStoreUrl; six "
                "ImClients of one shared session all stay and hear")


asyncio.run(main())

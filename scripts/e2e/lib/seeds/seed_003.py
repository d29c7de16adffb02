"""Seed 003: Tencent IM with TIMPush VoIP and LiveCommunicationKit (AtomicXCore, no UI).

Its order of calls: the app's backend issues the userSig, `LoginStore.login(sdkAppID:, userID:, userSig:)` then
`TUILogin.login`, whose success posts `TUILoginSuccess`; only then does `VoIPPushManager.uploadVoIPToken()` report
the PushKit token (`V2TIMManager.setVOIP(config: {certificateID, token})`). The caller's
`CallStore.shared.calls(participantIds:, callMediaType: .video | .audio, params:)` reaches the callee, offline
("VoIP Push 目前只支持离线状态下的推送"), as a VoIP push, which `showIncomingCall(with:)` reads exactly so:
`payloadDict["voip_caller_name"] as? String` (required), `payloadDict["ext"] as? String` parsed as JSON, its
`["voip_ext"] as? [String: String]` and that dictionary's `["voip_media_type"]` == "video" for a video call.
Answering and hanging up (`CallStore.accept` / `hangup`, `callEventPublisher`) are left to the calls tests; here a
call is started as a `callVideo` / `callAudio` message, and through `/api/calls`, cancelled before an answer:
`showIncomingCall` never reads `action`, so every VoIP push it gets is a new incoming call on the screen.
"""
import asyncio
import json
import uuid

import wire
from client import (APP_KEY, Device, Flow, apns_requests, apns_token, check, decoded, done, eventually, http, ok,
                    push_outbox_empty, signed)

flow = Flow("003")
BUNDLE = "com.example.timpush"


def login_store(user_id):
    """The backend's userSig for `user_id` (a signed login) and the SDK's login with it."""
    answer = signed("POST", "/api/im/auth/login", {"appKey": APP_KEY, "userId": user_id, "platform": "ios"})
    return ok(answer, wire.LoginResponse, f"LoginStore.login {user_id}")["token"]


def incoming_call(payload):
    """showIncomingCall(with:) on the payload dictionary: (callerName, isVideoCall, ext document) or a failure."""
    caller = payload.get("voip_caller_name")
    check(isinstance(caller, str), f"payloadDict[\"voip_caller_name\"] as? String is nil: {payload}")
    ext_string = payload.get("ext")
    check(isinstance(ext_string, str), f"payloadDict[\"ext\"] as? String is nil (ext is {type(ext_string).__name__})")
    try:
        ext = json.loads(ext_string)
    except ValueError:
        raise SystemExit(f"FAILED: ext is not JSON: {ext_string!r}")
    check(isinstance(ext, dict), f"ext as? [String: Any] is nil: {ext_string!r}")
    voip_ext = ext.get("voip_ext")
    check(isinstance(voip_ext, dict) and all(isinstance(v, str) for v in voip_ext.values()),
          f"extDic[\"voip_ext\"] as? [String: String] is nil: {voip_ext!r}")
    media = voip_ext.get("voip_media_type")
    check(media in ("audio", "video"), f"voip_media_type {media!r}")
    return caller, media == "video", ext


def voip_pushes(token):
    return [r for r in apns_requests(token) if r["headers"].get("apns-push-type") == "voip"]


def names_of(ext):
    """Every string the ext document carries (the caller id and message id are among them)."""
    values = set()
    for value in list(ext.values()) + list((ext.get("voip_ext") or {}).values()):
        if isinstance(value, str):
            values.add(value)
    return values


async def call(caller_ws, msg_type):
    """CallStore.calls(participantIds:, callMediaType:, params:) as a call message (params: timeout, userData; no
    status, so an invitation rather than a record)."""
    ack = await caller_ws.request("send", {"toId": "tim_callee", "chatType": "single", "msgType": msg_type,
                                           "content": {"timeout": 30, "userData": "自定义数据"},
                                           "clientMsgId": str(uuid.uuid4())})
    return decoded(wire.ImMessage, ack, f"calls({msg_type})")


def pushed_for(token, message):
    """The VoIP pushes to `token` for `message`."""
    found = []
    for request in voip_pushes(token):
        ext = (request.get("payload") or {}).get("ext")
        try:
            document = json.loads(ext) if isinstance(ext, str) else ext
        except ValueError:
            document = None
        if isinstance(document, dict) and message["id"] in names_of(document):
            found.append(request)
    return found


async def main():
    with flow.step("LoginStore.login for callee and caller (backend-signed userSig)"):
        callee_token, caller_token = login_store("tim_callee"), login_store("tim_caller")

    with flow.step("after TUILoginSuccess: uploadVoIPToken (setVOIP) with the login's token"):
        voip_token = apns_token()
        done(http("POST", "/api/push/tokens", {"token": voip_token, "vendor": "apns_voip", "bundleId": BUNDLE},
                  token=callee_token), "setVOIP")

    with flow.step("CallStore.calls(.video) to the offline callee: a VoIP push showIncomingCall reads"):
        caller_ws = await Device("tim_caller", caller_token).connect()
        profile = ok(http("POST", "/api/users/lookup", {"ids": ["tim_caller"]}, token=caller_token), wire.Lookup,
                     "the caller's profile")["users"][0]
        video = await call(caller_ws, "callVideo")
        request = (await eventually(lambda: pushed_for(voip_token, video), "the VoIP push of the video call"))[0]
        check(request["status"] == 200 and request["headers"].get("apns-topic") == BUNDLE + ".voip",
              f"mock APNs: {request['status']} {request['reason']} topic {request['headers'].get('apns-topic')}")
        caller, is_video, ext = incoming_call(request["payload"])
        check(is_video and caller == profile["nickname"], f"caller {caller!r}, video {is_video}")
        check({"tim_caller", video["id"]} <= names_of(ext), f"the caller id and message id are not in ext: {ext}")

    with flow.step("CallStore.calls(.audio): voip_media_type audio"):
        audio = await call(caller_ws, "callAudio")
        request = (await eventually(lambda: pushed_for(voip_token, audio), "the VoIP push of the audio call"))[0]
        caller, is_video, ext = incoming_call(request["payload"])
        check(not is_video and audio["id"] in names_of(ext), f"audio call ext {ext}")

    with flow.step("call records (ended, missed) and chat never ring the VoIP token"):
        records = []
        for msg_type, content in (("callVideo", {"status": "ended", "durationSec": 42}),
                                  ("callAudio", {"status": "missed"})):
            ack = await caller_ws.request("send", {"toId": "tim_callee", "chatType": "single", "msgType": msg_type,
                                                   "content": content, "clientMsgId": str(uuid.uuid4())})
            records.append(decoded(wire.ImMessage, ack, f"a {msg_type} record"))
        text = await caller_ws.request("send", {"toId": "tim_callee", "chatType": "single", "msgType": "text",
                                                "content": "未接来电", "clientMsgId": str(uuid.uuid4())})
        decoded(wire.ImMessage, text, "a text")
        await push_outbox_empty()
        rung = [r for r in records if pushed_for(voip_token, r)]
        check(not rung, f"call records rang the phone: {[r['id'] for r in rung]}")
        check(len(voip_pushes(voip_token)) == 2, f"{len(voip_pushes(voip_token))} VoIP pushes, expected the 2 calls")

    with flow.step("CallStore.calls through /api/calls, then the caller cancels: one incoming call, never a second"):
        # showIncomingCall reports every VoIP push as a new call (it never reads `action`): the cancel must not be
        # one, or the phone would ring again for a call that is over.
        answer = ok(http("POST", "/api/calls", {"participantIds": ["tim_callee"], "mediaType": "audio"},
                         token=caller_token), wire.ANY, "CallStore.calls")
        call_id = answer["callId"]

        def rang():
            found = []
            for request in voip_pushes(voip_token):
                ext = (request.get("payload") or {}).get("ext")
                if isinstance(ext, str) and json.loads(ext).get("call_id") == call_id:
                    found.append(request)
            return found

        request = (await eventually(rang, "the VoIP push of the call"))[0]
        caller, is_video, _ = incoming_call(request["payload"])
        check(not is_video and caller == profile["nickname"], f"caller {caller!r}, video {is_video}")
        done(http("POST", f"/api/calls/{call_id}/cancel", token=caller_token), "the caller's hangup before an answer")
        await push_outbox_empty()
        check(len(rang()) == 1, f"{len(rang())} incoming calls shown for one call")
        await caller_ws.close()

    flow.finish("signed logins; VoIP token after login; video and audio calls pushed as VoIP with voip_caller_name "
                "and ext as a JSON string (voip_ext.voip_media_type, caller id, message id); ended/missed records and "
                "text never rang the VoIP token; a cancelled call rang once")


asyncio.run(main())

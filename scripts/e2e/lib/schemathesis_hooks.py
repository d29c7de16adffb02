"""Schemathesis hooks for scripts/e2e/85-schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

- Signed server-to-server operations (security `signedRequest`: `/api/im/auth/login`, `/api/admin/releases...`) get
  their signature headers computed over the request exactly as it goes out (method, path with query as sent,
  SHA-256 of the serialized body). Schemathesis cannot compute an HMAC itself, so without this every one of them
  would only ever answer 401. Cases that test a missing header, or a timestamp, nonce or signature that breaks its
  documented pattern, keep it (the server must refuse them); the other refusals (stale timestamp, replayed nonce,
  wrong key) are covered by Tests/ParleyAuthTests/SignedRequestTests.swift.
- The WebSocket upgrade (`GET /ws`): a connection that answered 101 is closed at once, so that the next request
  does not go down a WebSocket.
- Downloads (`GET /files/{objectKey}`): schemathesis percent-encodes the slashes of a path parameter, and an object
  key spans several path segments; the server rightly refuses an escaped key (1307). The hook sends the slashes as
  they are, so that the seeded key and its signed URL reach the file (200); schemathesis_downloads.py adds the
  range and conditional answers.
- Unbinding a push token by path: the seeded token is bound to the fuzzing user's session again first (any push
  token bound by the fuzzer since replaced it: a session keeps one token per vendor).
- Admin operations that end sessions or accounts (ban, forced logout, deletion) never name a seeded user: they act
  on a user the seed imported for them.
- Operations that end sessions (logout, logout-all, ending a session by id) and the refresh-token exchange run as a
  throwaway user with a fresh session each time: with the fuzzing user's own token the first logout would turn every
  later operation into a 401, and a refresh with its refresh token would end its session (reuse detection).
- Rules openapi.yaml states in prose because JSON Schema cannot (they relate two parameters, the caller, or the
  state of a resource): a positive case (one schemathesis expects to be accepted) that breaks one is brought within
  it before it is sent (the table RULES below: the smallest change that obeys the rule), since the server rightly
  refuses it (1002; 1103 for a transfer to a non-member). Each rule quotes its description; the refusals are tested
  in Swift (BadInputTests, GroupTests, RevokeAndEditTests, ConsentTests, the updates feature's tests). This is done
  at the call, not with `filter_case`: the examples phase does not run case filters.

Environment: PARLEY_ST_BASE (server origin), PARLEY_ST_APP_KEY, PARLEY_ST_APP_SECRET, PARLEY_ST_TOKEN (the fuzzing
user's access token), PARLEY_ST_PUSH_TOKEN (the push token seeded for it), PARLEY_ST_THROWAWAY_USER and
PARLEY_ST_THROWAWAY_PASSWORD (an account of the app registered by schemathesis_seed.py), PARLEY_ST_SEED_FILE (the
seed's whole JSON: the fuzzing user's id, the seeded messages' types, the app's privacy-policy version).
"""

import hashlib
import hmac
import itertools
import json
import os
import re
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request

import requests
import schemathesis

BASE = os.environ["PARLEY_ST_BASE"]
APP_KEY = os.environ["PARLEY_ST_APP_KEY"]
APP_SECRET = os.environ["PARLEY_ST_APP_SECRET"]
TOKEN = os.environ["PARLEY_ST_TOKEN"]
PUSH_TOKEN = os.environ["PARLEY_ST_PUSH_TOKEN"]
THROWAWAY_USER = os.environ["PARLEY_ST_THROWAWAY_USER"]
THROWAWAY_PASSWORD = os.environ["PARLEY_ST_THROWAWAY_PASSWORD"]
with open(os.environ["PARLEY_ST_SEED_FILE"]) as seed_file:
    SEED = json.load(seed_file)

_calls = itertools.count()


class SignedRequest(requests.auth.AuthBase):
    """requests' last step before sending: the prepared request holds the final target and body bytes."""

    # The documented patterns (openapi.yaml, components/parameters): a value outside them is a negative case.
    VALID = {"X-Timestamp": re.compile(r"[0-9]+"), "X-Nonce": re.compile(r"[A-Za-z0-9_.@-]{8,128}"),
             "X-Signature": re.compile(r"[0-9a-f]{64}")}

    def __call__(self, request):
        headers = request.headers

        def fill(name, value):
            pattern = self.VALID.get(name)
            if name in headers and (pattern is None or pattern.fullmatch(headers[name])):
                headers[name] = value

        fill("X-App-Key", APP_KEY)
        fill("X-Timestamp", str(int(time.time())))
        # Fresh per request: a nonce is refused when reused within the window.
        fill("X-Nonce", "st-" + secrets.token_hex(12))
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        message = "\n".join([request.method, request.path_url, headers.get("X-Timestamp", ""),
                              headers.get("X-Nonce", ""), hashlib.sha256(body).hexdigest()])
        fill("X-Signature", hmac.new(APP_SECRET.encode(), message.encode(), hashlib.sha256).hexdigest())
        return request


class UpgradedConnectionClosed(requests.auth.AuthBase):
    """After a 101 the connection speaks WebSocket: close it, or the pool would send the next request down it."""

    def __call__(self, request):
        request.register_hook("response", self.close_if_upgraded)
        return request

    @staticmethod
    def close_if_upgraded(response, **_):
        if response.status_code == 101:
            response.raw.close()
        return response


class SlashesUnescaped(requests.auth.AuthBase):
    def __call__(self, request):
        parts = urllib.parse.urlsplit(request.url)
        path = re.sub("%2[Ff]", "/", parts.path)
        request.url = urllib.parse.urlunsplit(parts._replace(path=path))
        return request


def _signed_headers(method, path_with_query, body):
    timestamp = str(int(time.time()))
    nonce = "st-" + secrets.token_hex(12)
    message = "\n".join([method, path_with_query, timestamp, nonce, hashlib.sha256(body).hexdigest()])
    signature = hmac.new(APP_SECRET.encode(), message.encode(), hashlib.sha256).hexdigest()
    return {"X-App-Key": APP_KEY, "X-Timestamp": timestamp, "X-Nonce": nonce, "X-Signature": signature}


def _post(path, body, headers):
    request = urllib.request.Request(BASE + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["data"]


def _throwaway_session():
    """A new session of the throwaway user (the app never displaces sessions; a random platform all the same)."""
    platform = "p" + secrets.token_hex(6)
    return _post("/api/auth/login", {"username": THROWAWAY_USER, "password": THROWAWAY_PASSWORD, "platform": platform},
                 {"X-App-Key": APP_KEY})


def _security_schemes(operation):
    requirements = operation.definition.raw.get("security", [])
    return {name for requirement in requirements for name in requirement}


@schemathesis.hook
def before_call(context, case, kwargs):
    operation = case.operation
    repair = RULES.get(operation.definition.raw.get("operationId"))
    if repair is not None and case.meta is not None and case.meta.generation.mode.is_positive:
        # Assigning a container marks it changed (schemathesis then validates it again), so only when absent.
        if case.path_parameters is None:
            case.path_parameters = {}
        if case.query is None:
            case.query = {}
        repair(case)
    if "signedRequest" in _security_schemes(operation):
        kwargs["auth"] = SignedRequest()
        _spare_seeded_users(case)
        return
    operation_id = operation.definition.raw.get("operationId")
    if operation.path == "/ws":
        kwargs["auth"] = UpgradedConnectionClosed()
    elif operation_id == "downloadFile":
        kwargs["auth"] = SlashesUnescaped()
    elif operation_id == "unbindPushToken" and (case.path_parameters or {}).get("token") == PUSH_TOKEN:
        _post("/api/push/tokens", {"token": PUSH_TOKEN, "vendor": "apns"}, {"Authorization": "Bearer " + TOKEN})
    elif operation_id in ("logout", "logoutAll", "endSession", "refresh"):
        session = _throwaway_session()
        # Only where the case carries a token: cases that test a missing or malformed one keep theirs.
        if case.headers and case.headers.get("Authorization", "").startswith("Bearer ey"):
            case.headers["Authorization"] = "Bearer " + session["accessToken"]
        # Every other call names a session or refresh token that exists, the rest keep the generated value.
        if next(_calls) % 2 == 0:
            if operation_id == "endSession":
                case.path_parameters["id"] = _throwaway_session()["sessionId"]
            elif operation_id == "refresh" and isinstance(case.body, dict):
                case.body["refreshToken"] = session["refreshToken"]


def _spare_seeded_users(case):
    """Admin operations that end sessions or accounts (ban, logout, delete) never name a seeded user (schemathesis
    reuses ids it saw in answers): the fuzzing user's session must live through the run. They act on a user of
    their own instead, imported by the seed."""
    operation_id = case.operation.definition.raw.get("operationId")
    if operation_id in ("banUser", "logoutUser", "deleteAdminUser") and case.path_parameters \
            and case.path_parameters.get("userId") in SEED["userIds"]:
        case.path_parameters["userId"] = SEED["adminTarget"]


# Documented rules JSON Schema cannot carry, by operation: each changes a positive case as little as needed to obey.

def _ordered_pair(case):
    """ConversationId: "`si:LOW:HIGH` (the two user ids in byte order)". Dictionary values arrive percent-encoded."""
    conversation = str(case.path_parameters.get("id", ""))
    parts = urllib.parse.unquote(conversation).split(":")
    if len(parts) == 3 and parts[0] == "si" and parts[2].encode() < parts[1].encode():
        ordered = f"si:{parts[2]}:{parts[1]}"
        case.path_parameters["id"] = ordered.replace(":", "%3A") if "%3A" in conversation else ordered


def _ordered_body_pair(case):
    """revokeMessageByClientMsgId: `conversationId` is "`si:LOW:HIGH` (user ids in byte order)"."""
    body = case.body
    parts = body.get("conversationId", "").split(":") if isinstance(body, dict) and isinstance(
        body.get("conversationId"), str) else []
    if len(parts) == 3 and parts[0] == "si" and parts[2].encode() < parts[1].encode():
        body["conversationId"] = f"si:{parts[2]}:{parts[1]}"


# A structured content sent as text must hold a valid JSON document of its type ("`content` may be ... a string
# holding the JSON document"): a generated string is replaced by a minimal document of the type (its made-up object
# key then answers 404, which a valid request may).
_CONTENT_DOCUMENTS = {
    "richText": {"text": "x"},
    "image": {"objectKey": "k", "width": 1, "height": 1},
    "video": {"objectKey": "k", "durationSec": 1},
    "audio": {"objectKey": "k", "durationSec": 1},
    "file": {"objectKey": "k", "name": "n", "size": 0},
    "location": {"lat": 0, "lng": 0},
    "callAudio": {},
    "callVideo": {},
    "forward": {"messages": [{"msgType": "text", "content": "x"}]},
}


def _content_text_is_a_document(case):
    """sendMessage: a string `content` of a structured type "is parsed ... then checked exactly like the value"."""
    body = case.body
    if not isinstance(body, dict) or not isinstance(body.get("content"), str):
        return
    document = _CONTENT_DOCUMENTS.get(body.get("msgType"))
    if document is not None:
        body["content"] = json.dumps(document)


def _one_history_anchor(case):
    """listMessages: "`before=S` ... `after=S` ... Not both"."""
    _ordered_pair(case)
    if "before" in case.query and "after" in case.query:
        del case.query["after"]
    # "`begin` after `end` answers 1002" (`end=0` is no bound).
    begin, end = case.query.get("begin"), case.query.get("end")
    if _number(begin) and _number(end) and end != 0 and begin > end:
        case.query["begin"], case.query["end"] = end, begin


def _new_owner_a_member(case):
    """transferGroup: `userId` is "The new owner, a member of the group" (else 1103); a non-member is replaced by
    the first member the group lists (the caller themself, if alone: a transfer to yourself changes nothing)."""
    body = case.body
    group = case.path_parameters.get("id")
    if not isinstance(body, dict) or not isinstance(group, str):
        return
    path = f"/api/im/groups/{urllib.parse.quote(group, safe='')}/members?limit=100"
    request = urllib.request.Request(BASE + path, headers={"Authorization": "Bearer " + TOKEN})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            members = [member["userId"] for member in json.loads(response.read())["data"]["members"]]
    except urllib.error.HTTPError:
        return
    if members and body.get("userId") not in members:
        body["userId"] = members[0]


def _number(value):
    """JSON Schema's integers include `5.0`; booleans are not numbers."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _minimum_within_version(case):
    """publishRelease: `minSupportedVersionCode` is "at most the release's own `versionCode`"."""
    body = case.body
    if isinstance(body, dict) and _number(body.get("minSupportedVersionCode")) and _number(body.get("versionCode")) \
            and body["minSupportedVersionCode"] > body["versionCode"]:
        body["minSupportedVersionCode"] = body["versionCode"]


def _publishable_release(case):
    """publishRelease: the minimum as above, and "an iOS release needs `appStoreUrl`"."""
    _minimum_within_version(case)
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("platform"), str) and body["platform"].lower() == "ios" \
            and not isinstance(body.get("appStoreUrl"), str):
        body["appStoreUrl"] = "https://apps.apple.com/app/id1"


def _release_stays_valid(case):
    """updateRelease: "the release keeps at least one of the two" URLs (an iOS release its `appStoreUrl`), and its
    minimum stays at most its `versionCode` (checked against the release as it is now; an unknown id is left to
    answer 404)."""
    body = case.body
    if not isinstance(body, dict):
        return
    path = urllib.parse.quote(f"/api/admin/releases/{case.path_parameters.get('id')}")
    request = urllib.request.Request(BASE + path, headers=_signed_headers("GET", path, b""))
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            release = json.loads(response.read())["data"]
    except urllib.error.HTTPError:
        return
    after = {key: body.get(key, release[key]) for key in ("appStoreUrl", "downloadUrl", "minSupportedVersionCode")}
    if after["appStoreUrl"] is None and (release["platform"] == "ios" or after["downloadUrl"] is None):
        body["appStoreUrl"] = "https://apps.apple.com/app/id1"
    if _number(after["minSupportedVersionCode"]) and after["minSupportedVersionCode"] > release["versionCode"]:
        body["minSupportedVersionCode"] = release["versionCode"]


def _current_privacy_version(case):
    """consent: "`version` must be the app's current version" (an older or a future one answers 1002)."""
    if isinstance(case.body, dict):
        case.body["version"] = SEED["privacyVersion"]


def _message_of_the_content_type(case):
    """editMessage: content "valid for the message's own `msgType`": an edit of a seeded message goes to a seeded
    message of the content's type (the types of generated ids are unknown: they answer 404 whatever the content)."""
    kinds = SEED["messageTypes"]
    kind = kinds.get(str(case.path_parameters.get("id")))
    content = case.body.get("content") if isinstance(case.body, dict) else None
    wanted = "text" if isinstance(content, str) else "richText" if isinstance(content, dict) else None
    if kind is not None and wanted is not None and kind != wanted:
        case.path_parameters["id"] = next(id for id, type in kinds.items() if type == wanted)


def _without_nul_names(value):
    """JSON documents' member names may not hold U+0000 (1002, in prose: JSON Schema cannot say it of any depth)."""
    if isinstance(value, dict):
        return {key.replace("\x00", ""): _without_nul_names(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_nul_names(item) for item in value]
    return value


def _admin_custom_message(case):
    """adminSendMessage, adminBroadcast, adminBroadcastAll: `content` "as for `POST /api/im/messages` (it depends on
    `msgType`)": a positive case is sent as a custom message, whose content may be any JSON (no NUL in names)."""
    if isinstance(case.body, dict) and "msgType" in case.body:
        case.body["msgType"] = "custom"
        if "content" in case.body:
            case.body["content"] = _without_nul_names(case.body["content"])


def _friend_request_to_another(case):
    """sendFriendRequest: "Refusals: yourself ... (1002)": schemathesis reuses the caller's own id from answers (a
    call's `callerId`); a request to the caller goes to another seeded user."""
    if isinstance(case.body, dict) and case.body.get("userId") == SEED["userId"]:
        case.body["userId"] = SEED["recipients"][0]


def _call_invite_within_rules(case):
    """inviteToCall: "the caller among them" (1002) and "more than 8 callees (1705)", and `userData` "at most 4096
    bytes of UTF-8" (the schema can bound only characters): the caller is left out, at least one callee stays (a
    seeded user), at most 8, and `userData` is cut to 4096 bytes."""
    body = case.body
    if not isinstance(body, dict):
        return
    ids = body.get("participantIds")
    if isinstance(ids, list):
        ids = [i for i in ids if i != SEED["userId"]][:8]
        body["participantIds"] = ids or [SEED["recipients"][0]]
    data = body.get("userData")
    if isinstance(data, str) and len(data.encode()) > 4096:
        body["userData"] = data.encode()[:4096].decode(errors="ignore")


def _members_are_users(case):
    """addGroupMembers: "Every id must be a user of the app (1103)": in the stateful phase a 404 after the group's
    creation reads as the group missing, so a positive case adds seeded users."""
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("userIds"), list):
        body["userIds"] = [i if i in SEED["userIds"] else SEED["recipients"][0] for i in body["userIds"]]


def _room_within_rules(case):
    """createRoom, adminCreateRoom: `name` is "Trimmed; 1-128 characters" (so not only white space) and cannot hold
    U+0000; `ex` is "at most 4096 bytes as text" (a string without U+0000)."""
    body = case.body
    if not isinstance(body, dict):
        return
    name = body.get("name")
    if isinstance(name, str) and (not name.strip() or "\0" in name or len(name.strip()) > 128):
        body["name"] = "room"
    ex = body.get("ex")
    if ex is not None:
        text = ex if isinstance(ex, str) else json.dumps(ex, separators=(",", ":"), ensure_ascii=False)
        if len(text.encode()) > 4096 or (isinstance(ex, str) and "\0" in ex):
            body["ex"] = None


def _room_history_window(case):
    """listRoomMessages: "`begin` after `end` answers 1002" (`end=0` is no bound)."""
    begin, end = case.query.get("begin"), case.query.get("end")
    if _number(begin) and _number(end) and end != 0 and begin > end:
        case.query["begin"], case.query["end"] = end, begin


RULES = {
    "createRoom": _room_within_rules,
    "adminCreateRoom": _room_within_rules,
    "listRoomMessages": _room_history_window,
    "addGroupMembers": _members_are_users,
    "sendFriendRequest": _friend_request_to_another,
    "inviteToCall": _call_invite_within_rules,
    "getConversation": _ordered_pair,
    "updateConversation": _ordered_pair,
    "deleteConversation": _ordered_pair,
    "markConversationRead": _ordered_pair,
    "clearConversation": _ordered_pair,
    "markConversationUnread": _ordered_pair,
    "listPinnedMessages": _ordered_pair,
    "listMessages": _one_history_anchor,
    "revokeMessageByClientMsgId": _ordered_body_pair,
    "sendMessage": _content_text_is_a_document,
    "transferGroup": _new_owner_a_member,
    "publishRelease": _publishable_release,
    "updateRelease": _release_stays_valid,
    "consent": _current_privacy_version,
    "editMessage": _message_of_the_content_type,
    "adminSendMessage": _admin_custom_message,
    "adminBroadcast": _admin_custom_message,
    "adminBroadcastAll": _admin_custom_message,
    "adminClearConversation": _ordered_pair,
}
